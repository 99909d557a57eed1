// Package tools implements the four tools a model may call — read_file,
// list_files, edit_file and run_bash — with their schemas, argument
// validation and the exact result texts the model reads.
//
// Every call goes through one Executor, whichever way it arrives (the agent
// loop, `corral tool`, an ACP peer), so that confinement, the approval gate
// and the wording of results are the same code on every path. Failures are
// results, not Go errors: a refused path, a missing file, a declined approval
// are texts the model reads and recovers from.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"corral/sandbox"
)

// Result is what a tool call gives back to the model.
type Result struct {
	Text    string
	IsError bool
}

func okResult(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...)}
}

func errResult(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// An Action is a mutating call awaiting approval.
type Action struct {
	Tool        string // edit_file or run_bash
	Description string // what is about to happen, safe to print on a terminal
}

// An Approver decides whether a mutating call may run. It returns nil to
// allow the action, or an error whose text is the result the model reads.
type Approver interface {
	Approve(ctx context.Context, a Action) error
}

// noApprover stands in for a missing Approver: no one to ask means no.
type noApprover struct{}

func (noApprover) Approve(_ context.Context, a Action) error {
	return fmt.Errorf("Not run: %s needs approval, and no approver is configured.", a.Tool)
}

// Definition describes a tool to a model.
type Definition struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's arguments, an object.
	Schema json.RawMessage
}

// Config is what an Executor needs.
type Config struct {
	Workspace *sandbox.Workspace
	// Files runs the file tools' I/O inside the WASI guest.
	Files *sandbox.Guest
	// Approver is asked before every mutating call.
	Approver Approver
	// CommandTimeout bounds each run_bash command; zero means 120s.
	CommandTimeout time.Duration
}

// DefaultCommandTimeout bounds a run_bash command unless configured.
const DefaultCommandTimeout = 120 * time.Second

// An Executor runs tool calls.
type Executor struct {
	cfg   Config
	reads readLog
}

// NewExecutor returns an Executor for cfg.
func NewExecutor(cfg Config) *Executor {
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = DefaultCommandTimeout
	}
	if cfg.Approver == nil {
		cfg.Approver = noApprover{}
	}
	return &Executor{cfg: cfg, reads: readLog{seen: map[string]sandbox.Stamp{}}}
}

type tool struct {
	def Definition
	run func(e *Executor, ctx context.Context, args map[string]json.RawMessage) Result
}

var registry = map[string]tool{}

func register(t tool) { registry[t.def.Name] = t }

// Definitions returns the tools' definitions in a fixed order, so that the
// tool list is a byte-identical prefix of every request (prompt caching).
func Definitions() []Definition {
	defs := make([]Definition, 0, len(registry))
	for _, t := range registry {
		defs = append(defs, t.def)
	}
	order := map[string]int{"read_file": 0, "list_files": 1, "edit_file": 2, "run_bash": 3}
	sort.Slice(defs, func(i, j int) bool { return order[defs[i].Name] < order[defs[j].Name] })
	return defs
}

// Known reports whether name is a tool.
func Known(name string) bool {
	_, ok := registry[name]
	return ok
}

// Run runs one tool call. args is the JSON object the model sent.
func (e *Executor) Run(ctx context.Context, name string, args json.RawMessage) Result {
	t, ok := registry[name]
	if !ok {
		return errResult("Unknown tool: %s. The tools are read_file, list_files, edit_file and run_bash.", name)
	}
	var m map[string]json.RawMessage
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return errResult("%s: the arguments must be a JSON object.", name)
	}
	return t.run(e, ctx, m)
}
