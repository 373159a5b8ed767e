package diagnose_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

// The sweep: the same workload on a machine other processes fill
// at first and leave later. At 1 client the server and the load generator
// have 0.36 of 2 cores, at 8 clients 1.2: throughput "still grows", 5.8×
// 1 client's, per CPU-second the system had 1.7× and no more from 4 on. The diagnosis says so at the
// steps concerned, gives throughput per CPU-second beside throughput,
// and bases speedup, efficiency and the knee on it.
func TestSweepOnAMachineOthersLeave(t *testing.T) {
	cw := map[string]int64{"CPU": 500, "Client:ClientRead": 500}
	// step(clients, tps, busy, server s, generator s, run-queue s, waits): 10 s on 2 cores.
	f := &result.File{Steps: []result.Step{
		step(1, 147, 1.0, 2.4, 1.2, 8, cw), // ours 18%, others 82%
		step(2, 290, 1.0, 3.0, 1.6, 8, cw), // 23%, others 77%
		step(4, 540, 1.0, 6.0, 2.0, 9, cw), // 40%, others 60%
		step(8, 850, 1.0, 8.0, 4.0, 9, cw), // 60%, others 40%
	}}
	f.Steps[0].Probes.Process().Generator.RunQueueWaitS = 3 // 30% of the step waiting for a CPU
	diagnose.Scaling(f.Steps)
	d := diagnose.Sweep(f)
	if !d.PerCPU {
		t.Fatalf("per CPU not used: %+v", d.Steps)
	}
	cores := []float64{0.36, 0.46, 0.8, 1.2}
	for i, s := range d.Steps {
		if math.Abs(s.SystemCPUs-cores[i]) > 1e-9 || math.Abs(s.TPSPerCPU-f.Steps[i].Summary.TPS/cores[i]) > 1e-9 {
			t.Errorf("step %d: system cpus %v tps/cpu %v, want %v", i, s.SystemCPUs, s.TPSPerCPU, cores[i])
		}
		if (i > 0) != (s.CPUShift != "") {
			t.Errorf("step %d: cpu shift %q", i, s.CPUShift)
		}
	}
	if want := "the system had 1.20 of 2 cores (other processes 40%), 0.36 at 1 client"; d.Steps[3].CPUShift != want {
		t.Errorf("8 clients: %q, want %q", d.Steps[3].CPUShift, want)
	}
	per8 := (850 / 1.2) / (147 / 0.36)
	if s := f.Steps[3].Summary; math.Abs(s.Speedup-per8) > 1e-9 || math.Abs(s.Efficiency-per8/8) > 1e-9 {
		t.Errorf("8 clients: speedup %v efficiency %v, want %v per CPU-second", s.Speedup, s.Efficiency, per8)
	}
	sc := diagnose.ScalingOf(f.Steps)
	if !sc[3].PerCPU || math.Abs(sc[3].Speedup-per8) > 1e-9 {
		t.Errorf("scaling at 8 clients: %+v", sc[3])
	}
	for _, want := range []string{
		"Other processes took the machine's CPU unevenly across the steps: the server and the load generator had 0.36 of 2 cores at 1 client (other processes 82%) and 1.20 at 8 clients (40%)",
		"8 clients did 5.78× the throughput of 1 client, 1.73× per CPU-second",
		"Throughput per CPU-second the system had stops growing at 4 clients (8 clients: +5%)",
	} {
		if !strings.Contains(d.Paragraph, want) {
			t.Errorf("paragraph lacks %q:\n%s", want, d.Paragraph)
		}
	}
	if strings.Contains(d.Paragraph, "still growing") || strings.Contains(d.Paragraph, "held itself back") {
		t.Errorf("paragraph:\n%s", d.Paragraph)
	}

	// The same sweep with the machine's other load even: no per-CPU basis.
	for i := range f.Steps {
		f.Steps[i].Probes.Process().Host.BusyShare = 0.5 + float64(f.Steps[i].Probes.Process().Server.CPUS+f.Steps[i].Probes.Process().Generator.CPUS)/20
	}
	if d := diagnose.Sweep(f); d.PerCPU || d.Steps[3].CPUShift != "" || strings.Contains(d.Paragraph, "per CPU-second") {
		t.Errorf("even load: per CPU %v, paragraph:\n%s", d.PerCPU, d.Paragraph)
	}
}

// "Held itself back" is said of a first step only when its load generator
// had the CPU to spare; on a machine other processes fill, where it waited
// for a CPU, the first step's shortfall is the machine's.
func TestHeldBackOnlyWithCPUToSpare(t *testing.T) {
	cw := map[string]int64{"CPU": 900, "Client:ClientRead": 100}
	mk := func(genWait float64) *result.File {
		f := &result.File{Steps: []result.Step{
			step(1, 1000, 1.0, 1.2, 0.4, 1, cw), // others 92%
			step(2, 4000, 1.0, 1.4, 0.5, 1, cw), // others 90.5%: even
		}}
		f.Steps[0].Probes.Process().Generator.RunQueueWaitS = genWait
		return f
	}
	d := diagnose.Sweep(mk(3)) // waited 30% of the step for a CPU
	if d.Baseline != 1 || strings.Contains(d.Paragraph, "held itself back") || !strings.Contains(d.Paragraph, "because the load generator of 1 client was short of CPU") {
		t.Errorf("short of CPU: baseline %d\n%s", d.Baseline, d.Paragraph)
	}
	d = diagnose.Sweep(mk(0.1)) // 1%: CPU to spare
	if !strings.Contains(d.Paragraph, "1 client held itself back") {
		t.Errorf("CPU to spare:\n%s", d.Paragraph)
	}
}
