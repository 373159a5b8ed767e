package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
)

// Text is the failure's message: with its place in the script when it has
// one (Message), else the error's, redacted.
func (f Failure) Text() string {
	if f.Message != "" {
		return f.Message
	}
	return secret.Redact(f.Err.Error())
}

// maxCommandText is how much of a failing command a message carries.
const maxCommandText = 80

// placedMessage is a failure's message with where in the program it
// happened, as a user can find it in the script:
//
//	div.sql:3: ERROR: division by zero (SQLSTATE 22012), running "SELECT 1/0"
//
// A failure outside a script (connecting), a lost connection (it belongs
// to the server, not to the command it broke) and an error that already
// says its line (the interpreter's, the engine's own script errors) keep
// their message.
func (e *engine) placedMessage(f Failure) string {
	msg := secret.Redact(f.Err.Error())
	scripts := e.cfg.Program.Scripts()
	if f.Kind == metrics.FailConnection || f.Script < 0 || f.Script >= len(scripts) {
		return msg
	}
	var re *script.RuntimeError
	var se *ScriptError
	if errors.As(f.Err, &re) || errors.As(f.Err, &se) {
		return msg
	}
	s := scripts[f.Script]
	if f.Command < 0 || f.Command >= len(s.Commands) {
		return msg
	}
	cmd := s.Commands[f.Command]
	text := secret.Redact(clipText(strings.TrimSuffix(cmd.Text, ";"), maxCommandText))
	running := fmt.Sprintf("running %q", text)
	if cmd.Kind == script.KindSQL && cmd.SQL.Statements > 1 {
		running = fmt.Sprintf("running statement %d of %q", f.Query+1, text)
	}
	return fmt.Sprintf("%s:%d: %s, %s", s.Name, cmd.Line, msg, running)
}

// clipText cuts s to n bytes at most, on a character's boundary, marking
// the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
