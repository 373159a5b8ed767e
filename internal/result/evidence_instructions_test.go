package result_test

import "github.com/pgscale/pgscale/internal/result"

// The instructions probe's evidence, as the schema tests check it; breaking it
// gives a tool that counts nothing.
func init() {
	registerEvidenceCase("instructions", evidenceCase{
		set: func(p *result.Probes) {
			p.SetInstructions(&result.Instructions{Tool: "callgrind", Transactions: 1, PerTxn: 1, Kernel: "not counted",
				ByKind: []result.InstructionGroup{{Kind: "client backend", Processes: 1}}})
		},
		breaks: func(e map[string]any) { e["tool"] = "guessed" },
	})
}
