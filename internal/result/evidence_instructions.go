package result

// Instructions are the instructions the server's processes executed in
// the step's measured window, counted under Valgrind's callgrind. The
// window's edges fall between transactions, so every instruction counted
// belongs to one of the Transactions counted. Valgrind sees user space
// only: kernel instructions are not counted, the system calls made are.
type Instructions struct {
	Tool         string `json:"tool"`         // "callgrind"
	Transactions int64  `json:"transactions"` // the window's, every one counted
	// ClientBackends are the client backends' instructions, PerTxn them
	// per transaction (the instr/txn measure), ClientSyscalls their
	// system calls.
	ClientBackends uint64  `json:"client_backends"`
	PerTxn         float64 `json:"per_txn"`
	ClientSyscalls uint64  `json:"client_syscalls"`
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
}

// InstructionGroup is one backend type's instructions.
type InstructionGroup struct {
	Kind         string `json:"kind"`
	Processes    int    `json:"processes"`
	Instructions uint64 `json:"instructions"`
	Syscalls     uint64 `json:"syscalls"`
}
