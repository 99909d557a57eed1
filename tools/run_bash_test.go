package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corral/sandbox"
)

func executor(t *testing.T, ap Approver, timeout time.Duration) (*Executor, string) {
	t.Helper()
	ws, err := sandbox.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return NewExecutor(Config{Workspace: ws, Approver: ap, CommandTimeout: timeout}), ws.Dir()
}

func bash(e *Executor, command any) Result {
	args, _ := json.Marshal(map[string]any{"command": command})
	return e.Run(context.Background(), "run_bash", args)
}

func TestRunBash(t *testing.T) {
	tests := []struct {
		name      string
		command   any
		decline   error
		want      string
		wantError bool
		wantAsked bool
	}{
		{"output and exit", "echo out; echo err >&2; exit 4", nil, "out\n[stderr]\nerr\n\n[exit 4]", false, true},
		{"a failing command is a success result", "false", nil, "\n[exit 1]", false, true},
		{"blank command", "  \n\t", nil, "run_bash: empty command.", true, false},
		{"missing command", nil, nil, `run_bash: missing required argument "command".`, true, false},
		{"not a string", 42, nil, `run_bash: argument "command" must be a string.`, true, false},
		{"declined", "echo hi", errors.New("Not run: the user declined run_bash."), "Not run: the user declined run_bash.", true, true},
		{"refused redirect", "echo x > ../escape", nil, "[stderr]\nopen ../escape: Refused: '../escape' resolves outside the workspace root.\n\n[exit 1]", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &recorder{err: tc.decline}
			e, _ := executor(t, ap, 10*time.Second)
			var res Result
			if tc.command == nil {
				res = e.Run(context.Background(), "run_bash", json.RawMessage(`{}`))
			} else {
				res = bash(e, tc.command)
			}
			if res.Text != tc.want || res.IsError != tc.wantError {
				t.Errorf("got %q (error %v), want %q (error %v)", res.Text, res.IsError, tc.want, tc.wantError)
			}
			if asked := len(ap.asked) > 0; asked != tc.wantAsked {
				t.Errorf("approval asked: %v, want %v", asked, tc.wantAsked)
			}
		})
	}
}

func TestRunBashTimeoutIsError(t *testing.T) {
	e, _ := executor(t, &recorder{}, 300*time.Millisecond)
	res := bash(e, "echo before; while :; do :; done")
	want := "before\n\n[timed out after 0.3s - process tree killed]\n[exit 124]"
	if res.Text != want || !res.IsError {
		t.Errorf("got %q (error %v), want %q as an error", res.Text, res.IsError, want)
	}
}

func TestRunBashInterruptedIsError(t *testing.T) {
	e, _ := executor(t, &recorder{}, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res := e.Run(ctx, "run_bash", json.RawMessage(`{"command":"echo so far; while :; do :; done"}`))
	if !res.IsError || !strings.HasPrefix(res.Text, "so far\n") || !strings.Contains(res.Text, "interrupted") {
		t.Errorf("got %q (error %v)", res.Text, res.IsError)
	}
}

func TestRunBashRunsInWorkspace(t *testing.T) {
	e, dir := executor(t, &recorder{}, 10*time.Second)
	res := bash(e, "pwd; echo made > made.txt")
	if !strings.HasPrefix(res.Text, dir+"\n") {
		t.Errorf("ran in the wrong directory: %q", res.Text)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("made.txt = %q, %v", b, err)
	}
}

// The approval shows the command with anything that could disguise it on a
// terminal made visible.
func TestRunBashApprovalDescription(t *testing.T) {
	tests := []struct{ command, want string }{
		{"ls -la", "ls -la"},
		{"echo a\necho b", "echo a\necho b"},
		{"rm -rf / \r echo harmless", `rm -rf / \r echo harmless`},
		{"echo \x1b[2K\x1b[1Aok", `echo \x1b[2K\x1b[1Aok`},
		{"echo\tx", `echo\tx`},
		{"echo \u202eevil", `echo \u202eevil`},
		{"echo zero\u200bwidth", `echo zero\u200bwidth`},
		{"echo \u009b31m", `echo \x9b31m`},
		{"echo é 日本", "echo é 日本"},
	}
	for _, tc := range tests {
		ap := &recorder{err: errors.New("no")}
		e, _ := executor(t, ap, time.Second)
		bash(e, tc.command)
		if len(ap.asked) != 1 || ap.asked[0].Tool != "run_bash" || ap.asked[0].Description != tc.want {
			t.Errorf("%q: asked %+v, want description %q", tc.command, ap.asked, tc.want)
		}
	}
}

func TestRunBashDefinition(t *testing.T) {
	for _, d := range Definitions() {
		if d.Name != "run_bash" {
			continue
		}
		want := "Run a shell command in the workspace root and return its stdout, stderr and exit code. Use it for builds, tests, git and search. It is not interactive: never run a command that waits for input or never exits."
		if d.Description != want {
			t.Errorf("description changed: %q", d.Description)
		}
		return
	}
	t.Error("run_bash is not registered")
}

// Bytes that are not UTF-8 cannot arrive through JSON, but visible must
// still show them, not pass them to the terminal.
func TestVisibleInvalidUTF8(t *testing.T) {
	if got, want := visible("echo \xff\x9b"), `echo \xff\x9b`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
