package tools

import (
	"context"
	"encoding/json"
	"strings"

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
	command, _, aerr := stringArg(args, "run_bash", "command", true)
	if aerr != nil {
		return aerr.res
	}
	if strings.TrimSpace(command) == "" {
		return errResult("run_bash: empty command.")
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
