package plan

import "runtime"

func numCPU() int { return runtime.NumCPU() }
