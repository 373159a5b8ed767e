package observe

import "time"

// Failure is one client error as pgbench reports it: which client, where
// in which script, what went wrong and what the client does next. It rides
// on a Notice whose Text says the same in one line.
type Failure struct {
	Client int
	// Script is the index of the script in the workload, Command the
	// failing command's index in it and Query the statement within a
	// compound SQL command; all -1 when the client failed outside its
	// script (connecting).
	Script, Command, Query int
	Kind                   string // serialization, deadlock, connection or other
	// Source says what failed: "sql" (Message is the server's error in
	// libpq's words: "ERROR:  ..." and DETAIL, HINT lines), "meta" (a
	// meta-command: Verb names it and Failed says how, "evaluation of
	// meta-command failed"), "gset" (storing a query's results), "script"
	// (the end of the script reached inside a transaction or pipeline) or
	// "connection".
	Source       string
	Message      string
	Verb, Failed string
	Abort        bool // the client stops
	Retry        bool // the transaction is tried again
	Tries        int  // tries of the transaction so far, this one included
	// Elapsed is the time since the transaction's scheduled start.
	Elapsed time.Duration
}
