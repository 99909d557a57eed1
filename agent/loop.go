package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"corral/tools"
)

// An Executor runs one tool call. *tools.Executor is one; the loop needs
// nothing more, and `corral tool` goes through the same method.
type Executor interface {
	Run(ctx context.Context, name string, args json.RawMessage) tools.Result
}

// DefaultMaxTurns bounds the model round-trips of one task.
const DefaultMaxTurns = 40

// A Loop runs tasks: it sends the conversation to the model, runs the tool
// calls of each reply through the executor, sends the results back, and
// repeats until a reply asks for no tool.
type Loop struct {
	Provider Provider
	Tools    Executor
	// Definitions are the tools offered to the model, in a fixed order.
	Definitions []tools.Definition
	System      string
	MaxTurns    int
	Retry       RetryPolicy
	Sink        Sink
}

// A RunError says why a task ended without finishing. Status is one of the
// Status constants.
type RunError struct {
	Status string
	Err    error
}

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Run continues the conversation history with prompt and works until the
// model is done. It returns the conversation as it then stands, which is
// valid to send again even after an error or an interruption.
func (l *Loop) Run(ctx context.Context, history []Message, prompt string) ([]Message, error) {
	msgs, tail := Repair(history)
	for _, b := range tail {
		l.emit(Event{Type: EventToolResult, ID: b.ID, Text: b.Text, IsError: true})
	}
	msgs = append(msgs, Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: prompt}}})
	l.emit(Event{Type: EventUser, Text: prompt})

	maxTurns := l.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	var total Usage
	for turn := 1; ; turn++ {
		if turn > maxTurns {
			return msgs, l.finish(&RunError{StatusMaxTurns, fmt.Errorf("stopped after %d model round-trips (--max-turns); the task may be unfinished — continue it with --continue", maxTurns)}, turn-1, total)
		}
		reply, err := l.request(ctx, msgs)
		if err != nil {
			if ctx.Err() != nil {
				return msgs, l.finish(&RunError{StatusInterrupted, errors.New("interrupted by the user")}, turn, total)
			}
			return msgs, l.finish(&RunError{StatusAPIError, err}, turn, total)
		}
		total.add(reply.Usage)

		cut := cutOff(reply)
		msgs = append(msgs, Message{Role: RoleAssistant, Content: reply.Content})
		for _, b := range reply.Content {
			l.emit(blockEvent(b))
		}
		u := reply.Usage
		l.emit(Event{Type: EventUsage, StopReason: reply.StopReason, Usage: &u})

		var calls []Block
		for _, b := range reply.Content {
			if b.Type == BlockToolUse {
				calls = append(calls, b)
			}
		}
		switch reply.StopReason {
		case StopRefusal:
			// Calls in a refused reply are not run, but still need results.
			if len(calls) > 0 {
				msgs = append(msgs, l.skip(calls, "Not run: the reply was stopped by the provider's safety system."))
			}
			return msgs, l.finish(&RunError{StatusRefused, errors.New("the model declined to continue (refusal)")}, turn, total)
		case StopPauseTurn:
			if len(calls) == 0 {
				continue
			}
		case StopMaxTokens:
			if len(calls) == 0 {
				return msgs, l.finish(&RunError{StatusMaxTokens, errors.New("the model's reply was cut off at its output limit (max_tokens)")}, turn, total)
			}
			l.emit(Event{Type: EventError, Message: "the model's reply was cut off at its output limit (max_tokens); a tool call it did not finish was not run"})
		}
		if len(calls) == 0 {
			return msgs, l.finish(nil, turn, total)
		}

		results := Message{Role: RoleUser}
		for _, c := range calls {
			var res tools.Result
			switch {
			case ctx.Err() != nil:
				res = tools.Result{Text: InterruptedText, IsError: true}
			case cut[c.ID]:
				res = tools.Result{Text: "Not run: your reply hit the output token limit (max_tokens) before this call's input was complete. Send it again, smaller (for example, split a large edit).", IsError: true}
			default:
				res = l.runTool(ctx, c)
				if ctx.Err() != nil {
					text := InterruptedText
					if res.Text != "" {
						text += "\n\n" + res.Text
					}
					res = tools.Result{Text: text, IsError: true}
				}
			}
			results.Content = append(results.Content, Block{Type: BlockToolResult, ID: c.ID, Text: res.Text, IsError: res.IsError})
			l.emit(Event{Type: EventToolResult, ID: c.ID, Name: c.Name, Text: res.Text, IsError: res.IsError})
		}
		msgs = append(msgs, results)
		if ctx.Err() != nil {
			return msgs, l.finish(&RunError{StatusInterrupted, errors.New("interrupted by the user")}, turn, total)
		}
	}
}

// runTool runs one call. A tool that panics is a bug in corral, not in
// the conversation: the model gets an error result and the run, with all
// it has done so far, goes on.
func (l *Loop) runTool(ctx context.Context, c Block) (res tools.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = tools.Result{Text: fmt.Sprintf("Internal error in %s: %v. This is a bug in corral, not in your call.", c.Name, r), IsError: true}
		}
	}()
	return l.Tools.Run(ctx, c.Name, c.Input)
}

// skip answers calls with text without running them.
func (l *Loop) skip(calls []Block, text string) Message {
	m := Message{Role: RoleUser}
	for _, c := range calls {
		m.Content = append(m.Content, Block{Type: BlockToolResult, ID: c.ID, Text: text, IsError: true})
		l.emit(Event{Type: EventToolResult, ID: c.ID, Name: c.Name, Text: text, IsError: true})
	}
	return m
}

// cutOff returns the tool calls of a reply that ended at max_tokens whose
// input may be incomplete: the call the reply ended in, and any call whose
// input is not a JSON object.
func cutOff(r Reply) map[string]bool {
	if r.StopReason != StopMaxTokens {
		return nil
	}
	cut := map[string]bool{}
	for i, b := range r.Content {
		if b.Type != BlockToolUse {
			continue
		}
		var obj map[string]json.RawMessage
		if i == len(r.Content)-1 || json.Unmarshal(b.Input, &obj) != nil || obj == nil {
			cut[b.ID] = true
		}
	}
	return cut
}

func (l *Loop) finish(err error, turns int, total Usage) error {
	e := Event{Type: EventDone, Status: StatusFinished, Turns: turns, Usage: &total}
	var re *RunError
	if errors.As(err, &re) {
		e.Status = re.Status
		e.Message = re.Error()
		l.emit(Event{Type: EventError, Message: re.Error()})
	}
	l.emit(e)
	return err
}

func (l *Loop) emit(e Event) {
	if l.Sink == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	l.Sink.Event(e)
}

func blockEvent(b Block) Event {
	switch b.Type {
	case BlockText:
		return Event{Type: EventText, Text: b.Text}
	case BlockThinking:
		return Event{Type: EventThinking, Text: b.Text, Signature: b.Signature}
	case BlockRedactedThinking:
		return Event{Type: EventRedactedThinking, Data: b.Data}
	case BlockToolUse:
		return Event{Type: EventToolCall, ID: b.ID, Name: b.Name, Input: b.Input}
	}
	return Event{Type: b.Type}
}

// request sends msgs to the model, retrying what is worth retrying.
func (l *Loop) request(ctx context.Context, msgs []Message) (Reply, error) {
	req := Request{System: l.System, Tools: l.Definitions, Messages: msgs}
	onDelta := func(kind, text string) {
		t := EventTextDelta
		if kind == DeltaThinking {
			t = EventThinkingDelta
		}
		l.emit(Event{Type: t, Text: text})
	}
	p := l.Retry.withDefaults()
	for attempt := 0; ; attempt++ {
		reply, err := l.Provider.Stream(ctx, req, onDelta)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		retry, after := Retryable(err)
		if !retry || attempt >= p.MaxRetries {
			return Reply{}, err
		}
		wait := p.delay(attempt, after)
		l.emit(Event{Type: EventRetry, Message: fmt.Sprintf("%v; retrying in %s (retry %d of %d)", err, wait.Round(time.Millisecond), attempt+1, p.MaxRetries)})
		if err := p.Sleep(ctx, wait); err != nil {
			return Reply{}, err
		}
	}
}

// A RetryPolicy says how often and how patiently failed model requests are
// retried. The zero value is the default policy.
type RetryPolicy struct {
	MaxRetries int
	// Base is the first backoff delay; each retry doubles it, up to Max.
	Base, Max time.Duration
	// MaxRetryAfter caps how long a server's Retry-After may make us wait.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done; tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = 6
	}
	if p.Base <= 0 {
		p.Base = time.Second
	}
	if p.Max <= 0 {
		p.Max = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 5 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p
}

func (p RetryPolicy) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, p.MaxRetryAfter)
	}
	d := p.Base << min(attempt, 20)
	if d > p.Max || d <= 0 {
		d = p.Max
	}
	// Jitter spreads out clients that failed together.
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
