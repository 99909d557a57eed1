package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"corral/shell"
)

func init() {
	register(tool{
		def: Definition{
			Name:        "run_bash",
			Description: "Run a shell command in the workspace root and return its stdout, stderr and exit code. Use it for builds, tests, git and search. It is not interactive: never run a command that waits for input or never exits.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The bash command to run."}},"required":["command"]}`),
		},
		run: runBash,
	})
}

// runBash runs a command with the embedded shell. A non-zero exit is a
// success result, since the compiler's error is what the model asked for;
// only a timeout or an interruption is an error result.
func runBash(e *Executor, ctx context.Context, args map[string]json.RawMessage) Result {
	var command string
	if raw, ok := args["command"]; ok {
		if err := json.Unmarshal(raw, &command); err != nil {
			return errResult("run_bash: command must be a string.")
		}
	}
	if strings.TrimSpace(command) == "" {
		return errResult("run_bash: empty command.")
	}
	if e.cfg.Approver == nil {
		return errResult("Not run: run_bash needs approval, and no approver is configured.")
	}
	if err := e.cfg.Approver.Approve(ctx, Action{Tool: "run_bash", Description: visible(command)}); err != nil {
		return errResult("%s", err.Error())
	}
	res := shell.Run(ctx, shell.Options{
		Workspace: e.cfg.Workspace,
		Timeout:   e.cfg.CommandTimeout,
	}, command)
	return Result{Text: res.Text(), IsError: res.TimedOut || res.Interrupted}
}

// visible returns s as it may be shown on a terminal for approval: every
// control character, escape sequence, invisible or direction-changing
// character, and byte that is not UTF-8 is written as a Go-style escape
// (\x1b, \r, \u202e), so a command cannot disguise itself. Newlines stay
// real newlines so that a multi-line script reads naturally, and a
// backslash stays a backslash: the escapes are for reading, not for
// pasting back.
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hidden reports characters that print nothing or reorder what follows:
// bidirectional controls, zero-width characters and other format
// characters, and line or paragraph separators.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 || !unicode.IsPrint(r) && r != ' '
}
