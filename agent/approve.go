package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"corral/tools"
)

// AutoApprove allows every action. It is what --auto-approve selects.
type AutoApprove struct{}

// Approve allows a.
func (AutoApprove) Approve(context.Context, tools.Action) error { return nil }

// Refuse declines every action because there is no one to ask.
type Refuse struct{}

// Approve declines a.
func (Refuse) Approve(_ context.Context, a tools.Action) error {
	return fmt.Errorf("Not run: %s needs approval, and approval could not be asked (no terminal). Rerun corral with --auto-approve to allow it.", a.Tool)
}

// TerminalApprover asks on a terminal, one y/N question per action.
type TerminalApprover struct {
	In  io.Reader
	Out io.Writer

	mu    sync.Mutex
	once  sync.Once
	lines chan string // closed at EOF
}

// Approve shows a and waits for an answer. Anything but yes declines.
func (t *TerminalApprover) Approve(ctx context.Context, a tools.Action) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	// One reader for the approver's life: a read cannot be abandoned, and
	// a second reader would race the first for the user's next answer.
	t.once.Do(func() {
		t.lines = make(chan string)
		go func() {
			defer close(t.lines)
			sc := bufio.NewScanner(t.In)
			for sc.Scan() {
				t.lines <- sc.Text()
			}
		}()
	})
	// A line typed before this question is not an answer to it.
	for drained := false; !drained; {
		select {
		case _, ok := <-t.lines:
			drained = !ok
		default:
			drained = true
		}
	}
	fmt.Fprintf(t.Out, "\ncorral wants to %s:\n  %s\nAllow? [y/N] ", verb(a.Tool), a.Description)
	select {
	case <-ctx.Done():
		fmt.Fprintln(t.Out)
		return errors.New("Not run: interrupted by the user.")
	case line := <-t.lines:
		if s := strings.ToLower(strings.TrimSpace(line)); s == "y" || s == "yes" {
			return nil
		}
		return fmt.Errorf("Not run: the user declined %s.", a.Tool)
	}
}

func verb(tool string) string {
	if tool == "run_bash" {
		return "run a command"
	}
	return "change a file"
}

// DefaultApprover is the gate for a command's flags and standard streams:
// --auto-approve allows everything; otherwise, when in and out are a
// terminal, it is asked, and without one every action is declined. A silent
// yes is never the default.
func DefaultApprover(autoApprove bool, in io.Reader, out io.Writer) tools.Approver {
	if autoApprove {
		return AutoApprove{}
	}
	fin, ok1 := in.(*os.File)
	fout, ok2 := out.(*os.File)
	if ok1 && ok2 && IsTerminal(fin) && IsTerminal(fout) {
		return &TerminalApprover{In: in, Out: out}
	}
	return Refuse{}
}
