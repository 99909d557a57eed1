package tools

import (
	"context"
	"encoding/json"
)

func init() {
	register(tool{
		def: Definition{
			Name:        "run_bash",
			Description: "Run a shell command in the workspace root and return its stdout, stderr and exit code. Use it for builds, tests, git and search. It is not interactive: never run a command that waits for input or never exits.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The bash command to run."}},"required":["command"]}`),
		},
		run: func(e *Executor, ctx context.Context, args map[string]json.RawMessage) Result {
			return errResult("run_bash is not available yet.")
		},
	})
}
