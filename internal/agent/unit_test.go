package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/usage"
)

// The estimator against a server whose clock is ahead by a known offset,
// with round trips of random length and answers read at a random point of
// them: the estimate is within its uncertainty of the truth, and comes
// from the shortest round trip.
func TestEstimateOffsetFindsInjectedOffset(t *testing.T) {
	for _, offset := range []time.Duration{1234567 * time.Microsecond, -42 * time.Millisecond, 0} {
		rng := rand.New(rand.NewPCG(1, uint64(offset)))
		local := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now := func() time.Time { return local }
		var shortest time.Duration = -1
		read := func(context.Context) (time.Time, error) {
			out := time.Duration(rng.IntN(900)+100) * time.Microsecond // to the server
			back := time.Duration(rng.IntN(900)+100) * time.Microsecond
			local = local.Add(out)
			server := local.Add(offset)
			local = local.Add(back)
			if shortest < 0 || out+back < shortest {
				shortest = out + back
			}
			return server, nil
		}
		o, err := agent.EstimateOffset(context.Background(), agent.OffsetSamples, now, read)
		if err != nil {
			t.Fatal(err)
		}
		if d := o.Offset - offset; d > o.Uncertainty || -d > o.Uncertainty {
			t.Errorf("offset %v: estimated %v ± %v, off by %v", offset, o.Offset, o.Uncertainty, d)
		}
		if o.RTT != shortest || o.Uncertainty != (shortest+1)/2 {
			t.Errorf("offset %v: RTT %v and uncertainty %v, want the shortest round trip %v and half of it", offset, o.RTT, o.Uncertainty, shortest)
		}
		if back := o.ToLocal(o.ToServer(local)); !back.Equal(local) {
			t.Errorf("ToLocal(ToServer(t)) = %v, want %v", back, local)
		}
	}
}

// A symmetric round trip gives the offset exactly.
func TestEstimateOffsetSymmetric(t *testing.T) {
	local := time.Unix(1000, 0)
	read := func(context.Context) (time.Time, error) {
		local = local.Add(time.Millisecond)
		s := local.Add(5 * time.Second)
		local = local.Add(time.Millisecond)
		return s, nil
	}
	o, err := agent.EstimateOffset(context.Background(), 3, func() time.Time { return local }, read)
	if err != nil || o.Offset != 5*time.Second || o.RTT != 2*time.Millisecond {
		t.Errorf("got %+v, %v; want offset 5s, RTT 2ms", o, err)
	}
}

func TestSplitIsContiguousAndKeepsEachClientsRate(t *testing.T) {
	got := agent.Split(7, 3, 700)
	want := []agent.Share{{First: 0, Clients: 3, Rate: 300}, {First: 3, Clients: 2, Rate: 200}, {First: 5, Clients: 2, Rate: 200}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("share %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	got = agent.Split(1, 3, 0)
	if got[0].Clients != 1 || got[1].Clients != 0 || got[2].Clients != 0 || got[2].First != 1 {
		t.Errorf("1 client over 3 agents: %+v", got)
	}
}

// The manifest decodes strictly (no field unknown to batch/v1) into a Job
// with every field a run on agents needs.
func TestManifestIsAnIndexedJob(t *testing.T) {
	j, err := agent.Manifest(agent.ManifestOptions{Agents: 4, Image: "registry.example/pgscale:1", Secret: "coord",
		PasswordSecret: "target-pw", Spread: true, CPU: "2", Memory: "1Gi", Args: []string{"agent", "--job", "night"}, Namespace: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := agent.WriteManifest(&b, j); err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(b.Bytes())
	if err != nil {
		t.Fatalf("manifest is not YAML: %v\n%s", err, b.String())
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var job batchv1.Job
	if err := dec.Decode(&job); err != nil {
		t.Fatalf("manifest does not decode strictly into batch/v1 Job: %v\n%s", err, b.String())
	}
	s := job.Spec
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s\n%s", what, b.String())
		}
	}
	check("apiVersion batch/v1, kind Job", job.APIVersion == "batch/v1" && job.Kind == "Job")
	check("completionMode Indexed", s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion)
	check("completions = parallelism = 4", s.Completions != nil && *s.Completions == 4 && s.Parallelism != nil && *s.Parallelism == 4)
	check("backoffLimit 0", s.BackoffLimit != nil && *s.BackoffLimit == 0)
	check("restartPolicy Never", s.Template.Spec.RestartPolicy == corev1.RestartPolicyNever)
	check("namespace bench", job.Namespace == "bench")
	cs := s.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	c := cs[0]
	check("image", c.Image == "registry.example/pgscale:1")
	check("runs /pgscale agent --job night", strings.Join(append(c.Command, c.Args...), " ") == "/pgscale agent --job night")
	env := map[string]*corev1.EnvVarSource{}
	for _, e := range c.Env {
		check("no literal value in the environment: "+e.Name, e.Value == "")
		env[e.Name] = e.ValueFrom
	}
	co := env[agent.EnvCoordinator]
	check("coordinator DSN from Secret coord, key coordinator", co != nil && co.SecretKeyRef != nil && co.SecretKeyRef.Name == "coord" && co.SecretKeyRef.Key == "coordinator")
	pw := env["PGPASSWORD"]
	check("PGPASSWORD from Secret target-pw", pw != nil && pw.SecretKeyRef != nil && pw.SecretKeyRef.Name == "target-pw")
	check("cpu request 2", c.Resources.Requests.Cpu().String() == "2")
	check("memory request 1Gi", c.Resources.Requests.Memory().String() == "1Gi")
	a := s.Template.Spec.Affinity
	check("anti-affinity on the hostname, selecting the Job's own pods", a != nil && a.PodAntiAffinity != nil &&
		len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 1 &&
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey == "kubernetes.io/hostname" &&
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels["app.kubernetes.io/instance"] == job.Labels["app.kubernetes.io/instance"] &&
		s.Template.Labels["app.kubernetes.io/instance"] == job.Labels["app.kubernetes.io/instance"])
	check("no password anywhere", !strings.Contains(strings.ToLower(b.String()), "password="))

	j, err = agent.Manifest(agent.ManifestOptions{Agents: 2, Image: "i", Secret: "s"})
	if err != nil || j.Spec.Template.Spec.Affinity != nil {
		t.Errorf("without Spread: affinity %v, err %v", j.Spec.Template.Spec.Affinity, err)
	}
	for _, bad := range []agent.ManifestOptions{{Agents: 0, Image: "i", Secret: "s"}, {Agents: 1, Secret: "s"}, {Agents: 1, Image: "i"},
		{Agents: 1, Image: "i", Secret: "s", Name: "Bad_Name"}, {Agents: 1, Image: "i", Secret: "s", CPU: "lots"}} {
		if _, err := agent.Manifest(bad); !usage.Is(err) {
			t.Errorf("%+v: %v, want a usage error", bad, err)
		}
	}
}
