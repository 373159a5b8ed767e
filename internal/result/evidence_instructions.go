package result

import (
	"strings"

	"github.com/pgscale/pgscale/internal/probeid"
)

// Instructions are the instructions the server's processes executed in
// the step's measured window, counted under Valgrind's callgrind. The
// window's edges fall between transactions, so every instruction counted
// belongs to one of the Transactions counted. Valgrind sees user space
// only: kernel instructions are not counted, the system calls made are.
//
// The client backends work per transaction; their counts are the
// measures (instr/txn, syscalls/txn, clock-reads/txn, and with the cache
// simulation the misses and estimated cycles per transaction), and their
// counts per function say where a change went. A second process counted
// per transaction (a pooler under Valgrind) would record the same type
// beside this one.
type Instructions struct {
	Tool         string `json:"tool"`         // "callgrind"
	Transactions int64  `json:"transactions"` // the window's, every one counted
	// ClientBackends are the client backends' instructions, PerTxn them
	// per transaction (the instr/txn measure), ClientSyscalls their
	// system calls.
	ClientBackends uint64  `json:"client_backends"`
	PerTxn         float64 `json:"per_txn"`
	ClientSyscalls uint64  `json:"client_syscalls"`
	// ClientClockReads are those of ClientSyscalls that read the clock
	// (clock_gettime, gettimeofday, time): natively these are vDSO calls
	// that enter no kernel, but Valgrind hides the vDSO, so under it each
	// is a system call. The syscalls/txn measure leaves them out,
	// clock-reads/txn counts them. Absent in files written before they
	// were counted apart (their ClientSyscalls hold them).
	ClientClockReads *uint64 `json:"client_clock_reads,omitempty"`
	// ByKind are the counts per backend type (pg_stat_activity's), the
	// background processes included: they work to the clock, not per
	// transaction.
	ByKind []InstructionGroup `json:"by_kind"`
	// NotCounted are processes that could not be counted, and why;
	// StartedInWindow counts those that started during the window (not
	// counted).
	NotCounted      []string `json:"not_counted,omitempty"`
	StartedInWindow int      `json:"started_in_window,omitempty"`
	// Kernel says what of the kernel's part is counted.
	Kernel string `json:"kernel"`
	// Without names what the client backends' counts leave out.
	Without string `json:"without,omitempty"`
	// Pooler is a pooler's or proxy's count over the window, all its
	// processes (run under callgrind beside the server), PoolerPerTxn
	// that per transaction (the pooler-instr/txn measure) and
	// PoolerProfile its profile of instructions; absent without one.
	Pooler        *InstructionGroup `json:"pooler,omitempty"`
	PoolerPerTxn  float64           `json:"pooler_per_txn,omitempty"`
	PoolerProfile *Profile          `json:"pooler_profile,omitempty"`
	// PoolerWindowS is the wall time the pooler was counted for, from
	// counting switched on to off (seconds): its timers and maintenance
	// run to it, not to the transactions (compare separates the two).
	// Absent in files written before it was recorded.
	PoolerWindowS float64 `json:"pooler_window_s,omitempty"`
	// PoolerFunctions are the pooler's counts per function, all its
	// processes summed, as Functions are the client backends'.
	PoolerFunctions      []FunctionCount `json:"pooler_functions,omitempty"`
	PoolerFunctionsFloor uint64          `json:"pooler_functions_floor,omitempty"`
	// Cache is what the cache and branch simulation counted in the
	// client backends (--count instructions,cache); absent without it.
	Cache *CacheSim `json:"cache,omitempty"`
	// Functions are the client backends' counts per function, summed
	// over the backends, without what Without names: the differential
	// diagnosis of a counted comparison reads them. Those whose
	// instructions with their callees' are below FunctionsFloor, and who
	// made no system call, are left out.
	Functions      []FunctionCount `json:"functions,omitempty"`
	FunctionsFloor uint64          `json:"functions_floor,omitempty"`
}

// Simulated is what the cache and branch simulation counted, nil without
// it. Files written before a run without the simulation stopped
// recording an empty one (no caches, no misses) have Cache set all the
// same: that is no simulation either.
func (i *Instructions) Simulated() *CacheSim {
	if i == nil || i.Cache == nil || i.Cache.I1 == "" && i.Cache.LL == "" {
		return nil
	}
	return i.Cache
}

// InstructionGroup is one backend type's instructions.
type InstructionGroup struct {
	Kind         string `json:"kind"`
	Processes    int    `json:"processes"`
	Instructions uint64 `json:"instructions"`
	Syscalls     uint64 `json:"syscalls"`
}

// CacheSim is what callgrind's cache and branch simulation
// (--cache-sim=yes --branch-sim=yes) counted: a model of one core's caches
// and branch predictor fed with the process's accesses, not the
// hardware's.
type CacheSim struct {
	// I1, D1 and LL are the simulated caches as callgrind describes them
	// ("32768 B, 64 B, 8-way associative").
	I1 string `json:"i1"`
	D1 string `json:"d1"`
	LL string `json:"ll"`
	// Events are the client backends' counts in callgrind's event names:
	// Ir, Dr, Dw (instruction fetches, data reads and writes), I1mr,
	// D1mr, D1mw (their L1 misses), ILmr, DLmr, DLmw (their last-level
	// misses), Bc, Bi (conditional and indirect branches) and Bcm, Bim
	// (mispredicted).
	Events map[string]uint64 `json:"events"`
	// EstCycles are the client backends' cycles estimated from Events
	// with Model: a model, not a measurement.
	EstCycles uint64 `json:"est_cycles"`
	Model     string `json:"model"`
}

// FunctionCount is one function's count in the client backends: its own
// instructions (Self) and with those of the functions it called
// (Inclusive), its system calls the same two ways, and with the cache
// simulation its estimated cycles the same two ways.
type FunctionCount struct {
	Function string `json:"function"`
	// Object is the base name of the file the function is in.
	Object             string `json:"object"`
	Self               uint64 `json:"self"`
	Inclusive          uint64 `json:"inclusive"`
	Syscalls           uint64 `json:"syscalls,omitempty"`
	SyscallsInclusive  uint64 `json:"syscalls_inclusive,omitempty"`
	EstCycles          uint64 `json:"est_cycles,omitempty"`
	EstCyclesInclusive uint64 `json:"est_cycles_inclusive,omitempty"`
}

// clockFunctions are the C library's functions that read the clock
// through the vDSO natively and make a system call under Valgrind, which
// hides the vDSO (their names as callgrind gives them, before any "@"
// version).
var clockFunctions = map[string]bool{
	"clock_gettime": true, "__clock_gettime": true, "__clock_gettime64": true,
	"gettimeofday": true, "__gettimeofday": true, "__gettimeofday_syscall": true,
	"time": true, "__time": true, "time_syscall": true, "__time_syscall": true,
}

// ClockFunction reports whether a function, as callgrind names it, reads
// the clock: its system calls are what ClientClockReads counts.
func ClockFunction(name string) bool {
	n, _, _ := strings.Cut(name, "@")
	return clockFunctions[n]
}

func init() { registerEvidence[Instructions](probeid.Instructions) }

// Instructions is the step's instructions evidence, or nil (none recorded, or p nil).
func (p *Probes) Instructions() *Instructions {
	return getEvidence[Instructions](p, probeid.Instructions)
}

// SetInstructions records the step's instructions evidence (nil removes it).
func (p *Probes) SetInstructions(v *Instructions) { setEvidence(p, probeid.Instructions, v) }
