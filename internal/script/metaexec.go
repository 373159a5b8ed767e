package script

import (
	"bufio"
	"math"
	"os/exec"
	"strings"
	"time"
)

// Meta executes the meta-command at index pc of script s and returns the
// index of the next command to run (\if, \elif, \else jump; others pc+1).
// For \sleep it returns the duration and the engine sleeps. The pipeline
// commands are the engine's: Meta just returns pc+1 for them.
func (c *Interp) Meta(s *Script, pc int) (next int, sleep time.Duration, err error) {
	cmd := s.Commands[pc]
	vmap, sidx := c.scriptMap(s)
	if vmap == nil {
		return pc + 1, 0, &RuntimeError{Script: s.Name, Line: cmd.Line, Msg: "script is not part of the program"}
	}
	x := evalCtx{vmap: vmap, script: sidx, command: pc}
	switch cmd.Kind {
	case KindSet:
		v, err := c.eval(cmd.expr, &x)
		if err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		if err := c.assign(cmd.verb, int(vmap[cmd.setVar]), v); err != nil {
			return pc + 1, 0, c.assignErr(s, cmd, err)
		}
		return pc + 1, 0, nil
	case KindIf:
		v, err := c.eval(cmd.expr, &x)
		if err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		if v.truth() {
			return pc + 1, 0, nil
		}
		j := cmd.next
		for {
			b := s.Commands[j]
			switch b.Kind {
			case KindElif:
				x.command = j
				v, err := c.eval(b.expr, &x)
				if err != nil {
					return j + 1, 0, c.rtErr(s, b, err)
				}
				if v.truth() {
					return j + 1, 0, nil
				}
				j = b.next
			default: // \else or \endif
				return j + 1, 0, nil
			}
		}
	case KindElif, KindElse:
		// reached by falling out of a branch that ran: skip to \endif
		return cmd.endif + 1, 0, nil
	case KindEndIf:
		return pc + 1, 0, nil
	case KindSleep:
		d, err := c.sleepDuration(cmd, vmap)
		if err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		return pc + 1, d, nil
	case KindShell, KindSetShell:
		if err := c.runShell(cmd, vmap); err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		return pc + 1, 0, nil
	}
	return pc + 1, 0, nil
}

// atoi is C's atoi as glibc implements it: strtol, truncated to int.
func atoi(s string) int32 {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	over := false
	for ; i < len(s) && isDigit(s[i]); i++ {
		if v > (math.MaxUint64-9)/10 {
			over = true
		}
		v = v*10 + uint64(s[i]-'0')
	}
	var r int64
	switch {
	case neg && (over || v > 1<<63):
		r = math.MinInt64
	case !neg && (over || v > math.MaxInt64):
		r = math.MaxInt64
	case neg:
		r = -int64(v)
	default:
		r = int64(v)
	}
	return int32(r)
}

// sleepDuration is pgbench's evaluateSleep; arithmetic is on a C int.
func (c *Interp) sleepDuration(cmd *Command, vmap []int32) (time.Duration, error) {
	sl := &cmd.sleep
	var usec int32
	if sl.vidx >= 0 {
		b, ok := c.text(int(vmap[sl.vidx]))
		if !ok {
			return 0, errorf("%s: undefined variable \"%s\"", cmd.verb, sl.name)
		}
		usec = atoi(string(b))
		if usec == 0 && (len(b) == 0 || !isDigit(b[0])) {
			return 0, errorf("%s: invalid sleep time \"%s\" for variable \"%s\"", cmd.verb, b, sl.name)
		}
	} else {
		usec = atoi(sl.literal)
	}
	switch {
	case sl.unit == "" && len(cmd.words) < 2:
		usec *= 1000000
	case equalFoldASCII(sl.unit, "ms"):
		usec *= 1000
	case equalFoldASCII(sl.unit, "s"):
		usec *= 1000000
	}
	if usec <= 0 {
		return 0, nil
	}
	return time.Duration(usec) * time.Microsecond, nil
}

const shellCommandSize = 256

// runShell is pgbench's runShellCommand.
func (c *Interp) runShell(cmd *Command, vmap []int32) error {
	args := cmd.shell
	argv0 := args[0].name
	var b strings.Builder
	for i, a := range args {
		var arg string
		if a.vidx >= 0 {
			v, ok := c.text(int(vmap[a.vidx]))
			if !ok {
				return errorf("%s: undefined variable \"%s\"", argv0, a.name)
			}
			arg = string(v)
		} else {
			arg = a.lit
		}
		sep := 0
		if i > 0 {
			sep = 1
		}
		if b.Len()+len(arg)+sep >= shellCommandSize-1 {
			return errorf("%s: shell command is too long", argv0)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(arg)
	}
	command := b.String()
	if cmd.Kind == KindShell {
		// pgbench's system(): the command's output is pgbench's own.
		sh := exec.Command("/bin/sh", "-c", command)
		sh.Stdout, sh.Stderr = c.p.opts.ShellStdout, c.p.opts.ShellStderr
		if err := sh.Run(); err != nil {
			return errorf("%s: could not launch shell command", argv0)
		}
		return nil
	}
	sh := exec.Command("/bin/sh", "-c", command)
	sh.Stderr = c.p.opts.ShellStderr
	out, err := sh.StdoutPipe()
	if err != nil {
		return errorf("%s: could not launch shell command", argv0)
	}
	if err := sh.Start(); err != nil {
		return errorf("%s: could not launch shell command", argv0)
	}
	// fgets(res, 64, fp): at most 63 bytes, up to and including a newline
	r := bufio.NewReader(out)
	var res []byte
	for len(res) < 63 {
		ch, err := r.ReadByte()
		if err != nil {
			break
		}
		res = append(res, ch)
		if ch == '\n' {
			break
		}
	}
	_, _ = r.WriteTo(discard{})
	_ = sh.Wait()
	if len(res) == 0 {
		return errorf("%s: could not read result of shell command", argv0)
	}
	// strtol, then only trailing whitespace allowed
	s := string(res)
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	end := k
	if k == j {
		end = 0 // no conversion: endptr is the start
	}
	rest := strings.TrimLeft(s[end:], " \t\n\v\f\r")
	if rest != "" {
		return errorf("%s: shell command must return an integer (not \"%s\")", argv0, s)
	}
	v := int64(atoi(s))
	if err := c.assign("setshell", int(vmap[cmd.setVar]), intValue(v)); err != nil {
		return err
	}
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
