package agent

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"corral/tools"
)

func TestTerminalApprover(t *testing.T) {
	a := tools.Action{Tool: "edit_file", Description: "edit a.txt (replace 1 chars with 2)"}
	for _, tt := range []struct {
		input string
		allow bool
	}{
		{"y\n", true}, {"yes\n", true}, {" Y \n", true},
		{"n\n", false}, {"\n", false}, {"", false}, {"yess\n", false}, {"sure\n", false},
	} {
		r, w := io.Pipe()
		out := &answerer{w: w, answer: tt.input}
		ta := &TerminalApprover{In: r, Out: out}
		err := ta.Approve(context.Background(), a)
		w.Close()
		if (err == nil) != tt.allow {
			t.Errorf("answer %q: err = %v, want allowed %v", tt.input, err, tt.allow)
		}
		if !strings.Contains(out.String(), a.Description) || !strings.Contains(out.String(), "[y/N]") {
			t.Errorf("prompt = %q", out.String())
		}
		if err != nil && err.Error() != "Not run: the user declined edit_file." {
			t.Errorf("decline text = %q", err)
		}
	}
}

// answerer is a terminal's screen and its user: once the question shows,
// the user types the answer.
type answerer struct {
	bytes.Buffer
	w      *io.PipeWriter
	answer string
}

func (a *answerer) Write(p []byte) (int, error) {
	a.Buffer.Write(p)
	if strings.Contains(string(p), "[y/N]") {
		go func() {
			io.WriteString(a.w, a.answer)
			a.w.Close()
		}()
	}
	return len(p), nil
}

func TestTerminalApproverCancelled(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ta := &TerminalApprover{In: r, Out: io.Discard}
	if err := ta.Approve(ctx, tools.Action{Tool: "run_bash"}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("cancelled approval = %v", err)
	}
}

func TestDefaultApprover(t *testing.T) {
	if _, ok := DefaultApprover(true, nil, nil).(AutoApprove); !ok {
		t.Error("--auto-approve must allow")
	}
	// Not a terminal, and no flag: no.
	ap := DefaultApprover(false, strings.NewReader("y\n"), io.Discard)
	err := ap.Approve(context.Background(), tools.Action{Tool: "run_bash"})
	want := "Not run: run_bash needs approval, and approval could not be asked (no terminal). Rerun corral with --auto-approve to allow it."
	if err == nil || err.Error() != want {
		t.Errorf("without a terminal: %v, want %q", err, want)
	}
}
