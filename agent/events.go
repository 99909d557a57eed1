package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"corral/tools"
)

// Event types. One Event type feeds the terminal renderer, --output json
// and the session file, so that what a script sees, what the user sees and
// what a resumed session rebuilds from cannot drift apart.
const (
	EventSession          = "session"  // first line of a session file
	EventUser             = "user"     // a prompt
	EventText             = "text"     // a complete assistant text block
	EventThinking         = "thinking" // a complete thinking block
	EventRedactedThinking = "redacted_thinking"
	EventToolCall         = "tool_call"
	EventToolResult       = "tool_result"
	EventApproval         = "approval"
	EventRetry            = "retry" // a model request failed and will be retried
	EventError            = "error"
	EventUsage            = "usage" // closes one model reply
	EventDone             = "done"

	// Streaming pieces: shown as they arrive, never stored, since the
	// complete blocks follow.
	EventTextDelta     = "text_delta"
	EventThinkingDelta = "thinking_delta"
)

// Done statuses.
const (
	StatusFinished    = "finished"
	StatusMaxTurns    = "max_turns"
	StatusMaxTokens   = "max_tokens"
	StatusRefused     = "refused"
	StatusAPIError    = "api_error"
	StatusInterrupted = "interrupted"
)

// An Event is something that happened in a run.
type Event struct {
	Type string    `json:"type"`
	Time time.Time `json:"time,omitzero"`

	// session
	Session   string `json:"session,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`

	Text      string          `json:"text,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`

	// approval
	Allowed *bool `json:"allowed,omitempty"`

	// usage
	StopReason string `json:"stop_reason,omitempty"`
	Usage      *Usage `json:"usage,omitempty"`

	// done: Status says how the task ended; Message why, when not finished.
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Turns   int    `json:"turns,omitempty"`
}

// Stored reports whether e belongs in a session file.
func (e Event) Stored() bool {
	return e.Type != EventTextDelta && e.Type != EventThinkingDelta
}

// A Sink receives events.
type Sink interface {
	Event(Event)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Event calls f.
func (f SinkFunc) Event(e Event) { f(e) }

// Tee sends each event to every sink in order.
func Tee(sinks ...Sink) Sink {
	return SinkFunc(func(e Event) {
		for _, s := range sinks {
			if s != nil {
				s.Event(e)
			}
		}
	})
}

// JSONWriter writes each stored event as one JSON line: --output json.
type JSONWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewJSONWriter returns a JSONWriter on w.
func NewJSONWriter(w io.Writer) *JSONWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONWriter{enc: enc}
}

// Event writes e unless it is a streaming piece.
func (j *JSONWriter) Event(e Event) {
	if !e.Stored() {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.enc.Encode(e)
}

// Printer renders a run for a person: assistant text streams to Out as it
// arrives, and everything else goes to Err as short lines, so that Out holds
// only the answer and can be piped.
type Printer struct {
	Out, Err io.Writer

	mu       sync.Mutex
	inText   bool // the last thing written to Out was streamed text without a newline
	thinking bool // a thinking stream is open on Err
	calls    map[string]Event
	session  string
}

// Event renders e.
func (p *Printer) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Type != EventThinkingDelta && p.thinking {
		fmt.Fprintln(p.Err)
		p.thinking = false
	}
	switch e.Type {
	case EventSession:
		p.session = e.Session
	case EventTextDelta:
		fmt.Fprint(p.Out, e.Text)
		p.inText = !strings.HasSuffix(e.Text, "\n")
	case EventThinkingDelta:
		if !p.thinking {
			p.endText()
			fmt.Fprint(p.Err, "✻ ")
			p.thinking = true
		}
		fmt.Fprint(p.Err, e.Text)
	case EventToolCall:
		if p.calls == nil {
			p.calls = map[string]Event{}
		}
		p.calls[e.ID] = e
	case EventToolResult:
		p.endText()
		call := p.calls[e.ID]
		delete(p.calls, e.ID)
		fmt.Fprintln(p.Err, ToolLine(call.Name, call.Input, e.Text, e.IsError))
	case EventRetry:
		p.endText()
		fmt.Fprintf(p.Err, "! %s\n", e.Message)
	case EventError:
		p.endText()
		fmt.Fprintf(p.Err, "corral: %s\n", e.Message)
	case EventDone:
		p.endText()
		if u := e.Usage; u != nil && e.Turns > 0 {
			fmt.Fprintf(p.Err, "─ %d %s · tokens: %d in, %d out, %d cache read, %d cache write",
				e.Turns, plural(e.Turns, "turn", "turns"), u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens)
			if p.session != "" {
				fmt.Fprintf(p.Err, " · session %s", p.session)
			}
			fmt.Fprintln(p.Err)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (p *Printer) endText() {
	if p.inText {
		fmt.Fprintln(p.Out)
		p.inText = false
	}
}

// ToolLine is the one-line summary of a tool call and its result: a glyph,
// what was done to what, and how it went.
func ToolLine(name string, input json.RawMessage, result string, isError bool) string {
	var args map[string]any
	json.Unmarshal(input, &args)
	str := func(k string) string {
		s, _ := args[k].(string)
		return s
	}
	var verb, arg string
	switch name {
	case "read_file":
		verb, arg = "read", str("path")
	case "list_files":
		verb, arg = "list", str("path")
		if arg == "" {
			arg = "."
		}
	case "edit_file":
		verb, arg = "edit", str("path")
	case "run_bash":
		verb, arg = "run", str("command")
	default:
		verb = name
	}
	arg = oneLine(arg, 80)
	if isError {
		return fmt.Sprintf("✗ %s %s: %s", verb, arg, oneLine(result, 120))
	}
	var summary string
	switch name {
	case "read_file":
		summary = fmt.Sprintf("(%d chars)", utf8.RuneCountInString(result))
	case "list_files":
		n := countLines(result)
		summary = fmt.Sprintf("(%d %s)", n, plural(n, "entry", "entries"))
	default:
		summary = oneLine(result, 100)
	}
	return fmt.Sprintf("● %s %s %s", verb, arg, summary)
}

func countLines(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// oneLine shortens s to its first line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n-1]) + "…"
	}
	return s
}

// ObservedApprover reports every approval decision as an event.
type ObservedApprover struct {
	Inner tools.Approver
	Sink  Sink
}

// Approve asks Inner and reports the answer.
func (o ObservedApprover) Approve(ctx context.Context, a tools.Action) error {
	err := o.Inner.Approve(ctx, a)
	allowed := err == nil
	e := Event{Type: EventApproval, Time: time.Now().UTC(), Name: a.Tool, Text: a.Description, Allowed: &allowed}
	if err != nil {
		e.Message = err.Error()
	}
	o.Sink.Event(e)
	return err
}
