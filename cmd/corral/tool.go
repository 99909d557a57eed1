package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"corral/agent"
	"corral/sandbox"
	"corral/tools"
)

const toolUsage = `Usage: corral tool NAME 'JSON-ARGS' [flags]

Runs one tool call exactly as the agent would — same confinement, same
approval gate, same result text — and prints the result text.

Tools: read_file, list_files, edit_file, run_bash.
Example: corral tool read_file '{"path": "README.md", "limit": 20}'

Exit status: 0 for a success result, 1 for an error result, 2 for a usage
error (an unknown tool, arguments that are not a JSON object).

Flags:
`

func runTool(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("corral tool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", ".", "the workspace `DIR`ectory the tools are confined to")
	autoApprove := fs.Bool("auto-approve", false, "allow edit_file and run_bash without asking")
	timeout := fs.Duration("command-timeout", tools.DefaultCommandTimeout, "bound on a run_bash command")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), toolUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(fs, err, stdout)
	}
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprintln(stderr, "corral tool: want a tool name and one JSON argument object")
		return exitError{2}
	}
	name, raw := pos[0], "{}"
	if len(pos) == 2 {
		raw = pos[1]
	}
	if !tools.Known(name) {
		fmt.Fprintf(stderr, "corral tool: unknown tool %q (the tools are read_file, list_files, edit_file, run_bash)\n", name)
		return exitError{2}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		fmt.Fprintf(stderr, "corral tool: the arguments must be a JSON object: %s\n", strings.TrimSpace(raw))
		return exitError{2}
	}

	ws, err := sandbox.OpenWorkspace(*workspace)
	if err != nil {
		return err
	}
	defer ws.Close()
	guest := sandbox.NewGuest(ws, sandbox.CacheDir())
	defer guest.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ex := tools.NewExecutor(tools.Config{
		Workspace:      ws,
		Files:          guest,
		Approver:       agent.DefaultApprover(*autoApprove, stdin, stderr),
		CommandTimeout: *timeout,
	})
	res := ex.Run(ctx, name, json.RawMessage(raw))
	fmt.Fprint(stdout, res.Text)
	if !strings.HasSuffix(res.Text, "\n") {
		fmt.Fprintln(stdout)
	}
	if res.IsError {
		return exitError{1}
	}
	return nil
}
