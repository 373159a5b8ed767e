package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
)

// Machine is what a series keeps of the machine a run was measured on: the
// parts of result.Environment that set how fast it can go, and none that
// change between two runs on the same hardware.
type Machine struct {
	// Fingerprint identifies the machine: the first 12 hex digits of the
	// SHA-256 of the other fields.
	Fingerprint string
	// OS is GOOS/GOARCH ("linux/amd64").
	OS string
	// CPUModel is the CPU's model name, spaces collapsed.
	CPUModel string
	// CPUs is the number of logical CPUs.
	CPUs int
	// MemoryGiB is the memory the kernel reports, rounded up to a whole
	// GiB: the kernel keeps a few hundred MB of the installed memory for
	// itself, an amount that moves by a few MB between boots and kernel
	// builds, so rounding up gives the installed size and stays put (a
	// 24 GiB machine reports 24105 MB, 23.5 GiB).
	MemoryGiB int
	// Kernel is the kernel's major version ("6" of "6.1.0-18-amd64"):
	// minor updates leave a series whole, so their effect shows as a
	// change point instead of a new series.
	Kernel string
}

// FingerprintOf returns the machine of an environment. The host name, Go
// version and GOMAXPROCS are left out: CI runners get a new host name each
// time, and a new Go or pgscale build is a change to detect, not another
// machine.
func FingerprintOf(e result.Environment) Machine {
	m := Machine{
		OS:        e.OS,
		CPUModel:  strings.Join(strings.Fields(e.CPUModel), " "),
		CPUs:      e.CPUs,
		MemoryGiB: int((e.MemoryMB + 1023) / 1024),
		Kernel:    e.Kernel,
	}
	if major, _, ok := strings.Cut(e.Kernel, "."); ok {
		m.Kernel = major
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%s", m.OS, m.CPUModel, m.CPUs, m.MemoryGiB, m.Kernel)))
	m.Fingerprint = hex.EncodeToString(sum[:6])
	return m
}

// String describes the machine: "AMD EPYC, 2 CPUs, 24 GiB, linux/amd64,
// kernel 6".
func (m Machine) String() string {
	model := m.CPUModel
	if model == "" {
		model = "unknown CPU"
	}
	return fmt.Sprintf("%s, %d CPUs, %d GiB, %s, kernel %s", model, m.CPUs, m.MemoryGiB, m.OS, m.Kernel)
}
