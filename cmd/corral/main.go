// Command corral is a terminal coding agent whose safety lives in the
// executor: the model gets four tools, and each runs behind checks that no
// model output can talk its way past.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `corral — a coding agent that keeps to its workspace

Usage:
  corral -p PROMPT [flags]            run one task and print the answer
  corral tool NAME 'JSON-ARGS' [flags] run one tool call, as the agent would
  corral sh -c 'SCRIPT' [ARGS...]      run a script with corral's embedded bash
  corral sh FILE [ARGS...]

Run 'corral' alone for the task flags, 'corral tool --help' and
'corral sh --help' for theirs.
`

// exitError carries a process exit status out of a subcommand.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "tool":
		err = runTool(args[1:], stdin, stdout, stderr)
	case len(args) > 0 && args[0] == "sh":
		err = runSh(args[1:], stdin, stdout, stderr)
	case len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = runAgent(args, stdin, stdout, stderr)
	}
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintln(stderr, "corral:", err)
		return 1
	}
}

// flagError is what a command returns for an error from parsing its flags:
// asked for help, it prints its usage on stdout and ends with status 0;
// anything else is a usage error, which the flag package has already
// described on stderr.
func flagError(fs *flag.FlagSet, err error, stdout io.Writer) error {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return err
	}
	return exitError{2}
}

// parseInterspersed parses flags that may stand before, between or after
// the positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
