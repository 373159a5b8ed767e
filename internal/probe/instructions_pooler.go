package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pgscale/pgscale/internal/result"
)

// poolerCount counts, beside the server's, the instructions of a pooler
// or proxy run under callgrind (target.Proxy.Callgrind): every process of
// its tree, switched on and off and dumped at the window's edges with the
// server's, the whole count per transaction the pooler-instr/txn measure.
// Nothing of the pooler's is left out: which of its functions run to the
// clock (timers, housekeeping) only its author knows.
type poolerCount struct {
	cg   Callgrind
	root int // the pooler's pid

	mu      sync.Mutex
	counted []int
	errs    []string
	// on and off are when counting was switched on in the last of the
	// pooler's processes and off in the first: the window's wall time,
	// over which its timers and maintenance ran (result's PoolerWindowS).
	on, off time.Time
}

// pids lists the pooler's processes now: its root and its descendants.
func (c *poolerCount) pids() []int { return append([]int{c.root}, descendants(c.root)...) }

// edge switches counting on (start) or off and dumps with hint, in every
// process of the pooler's tree; a process that cannot be reached is an
// error (the count would miss it).
func (c *poolerCount) edge(ctx context.Context, start bool, hint string) error {
	commands := []string{"instrumentation off", "dump " + hint}
	if start {
		commands = []string{"zero", "instrumentation on"}
		c.mu.Lock()
		c.counted, c.errs = c.pids(), nil
		c.mu.Unlock()
	}
	c.mu.Lock()
	pids := append([]int(nil), c.counted...)
	c.mu.Unlock()
	errs := make([]error, len(pids))
	var wg sync.WaitGroup
	if !start {
		c.off = time.Now()
	}
	for i, pid := range pids {
		wg.Go(func() { _, errs[i] = c.cg.Control(ctx, pid, commands...) })
	}
	wg.Wait()
	if start {
		c.on = time.Now()
	}
	for i, err := range errs {
		if err != nil {
			c.mu.Lock()
			c.errs = append(c.errs, fmt.Sprintf("pooler %d: %v", pids[i], err))
			c.mu.Unlock()
			return fmt.Errorf("the pooler's process %d: %w", pids[i], err)
		}
	}
	return nil
}

// report adds the pooler's count to ev, and writes its profile beside the
// server's (NAME.pooler.instructions.pb.gz).
func (c *poolerCount) report(ev *result.Instructions, hint, profile string, step string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := &result.InstructionGroup{Kind: "pooler"}
	var dumps []*CallgrindDump
	kinds := map[int]string{}
	sort.Ints(c.counted)
	for _, pid := range c.counted {
		d, err := readDump(c.cg, pid, hint)
		if err != nil {
			return err
		}
		t := d.Total()
		g.Processes++
		g.Instructions += t.Ir
		g.Syscalls += t.Syscalls
		dumps = append(dumps, d)
		kinds[pid] = "pooler"
	}
	if len(dumps) == 0 {
		return errors.New("no pooler process was counted")
	}
	ev.Pooler = g
	if ev.Transactions > 0 {
		ev.PoolerPerTxn = float64(g.Instructions) / float64(ev.Transactions)
	}
	if c.off.After(c.on) {
		ev.PoolerWindowS = c.off.Sub(c.on).Seconds()
	}
	ev.NotCounted = append(ev.NotCounted, c.errs...)
	ev.PoolerFunctionsFloor = max(1, uint64(float64(g.Instructions)*functionsFloor))
	ev.PoolerFunctions = functionCounts(clientFunctions(dumps), ev.PoolerFunctionsFloor)
	prof, err := CallgrindProfile(dumps, kinds, step)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(profile), 0o755); err != nil {
		return fmt.Errorf("profile directory: %w", err)
	}
	if err := writeProfile(profile, prof); err != nil {
		return err
	}
	ev.PoolerProfile = summarize(prof, profile, nil)
	ev.PoolerProfile.Unit = "instructions"
	return nil
}

// readDump reads the dump of process pid with this window's hint, and
// removes it.
func readDump(cg Callgrind, pid int, hint string) (*CallgrindDump, error) {
	files, _ := filepath.Glob(cg.Out(pid) + ".*")
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		d, err := ParseCallgrind(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if d.Trigger == "dump "+hint {
			os.Remove(name)
			return d, nil
		}
	}
	return nil, fmt.Errorf("no callgrind dump %q of process %d", hint, pid)
}

// poolerProfileName is the pooler's profile file beside the server's.
func poolerProfileName(server string) string {
	return strings.TrimSuffix(server, ".instructions.pb.gz") + ".pooler.instructions.pb.gz"
}
