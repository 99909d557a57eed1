package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"corral/agent"
	"corral/sandbox"
	"corral/shell"
)

const shUsage = `Usage: corral sh [flags] -c 'SCRIPT' [NAME [ARGS...]]
       corral sh [flags] FILE [ARGS...]

Runs a bash script with corral's embedded shell, in the current directory,
and exits with the script's status. It needs no bash on the machine: ls, cat,
cp, mv, rm, mkdir and touch are built in when they are missing. A script the
embedded shell cannot run (coproc, file descriptors above 2, ...) is run with
the system shell instead, with a note on stderr.

As with bash -c, NAME is $0 and ARGS are $1 and on. Flags come before the
script; everything after it is passed to the script.

The shell's own file access (redirections, cd, source, globbing, file tests)
is confined to the workspace directory; the programs it starts are not.
Everything the script starts is killed when it ends.

Flags:
`

func runSh(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("corral sh", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("c", "", "run `SCRIPT` rather than a file")
	workspace := fs.String("workspace", ".", "the `DIR`ectory the shell's file access is confined to")
	timeout := fs.Duration("command-timeout", 0, "kill the script and everything it started after this long (0: no limit)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), shUsage)
		fs.PrintDefaults()
	}
	// Not parseInterspersed: a script's own arguments may look like flags.
	if err := fs.Parse(args); err != nil {
		return flagError(fs, err, stdout)
	}
	cFlag := false
	fs.Visit(func(f *flag.Flag) { cFlag = cFlag || f.Name == "c" })
	pos := fs.Args()

	var name, text string
	var params []string
	switch {
	case cFlag:
		text, name = *script, "corral"
		if len(pos) > 0 {
			name, params = pos[0], pos[1:]
		}
	case len(pos) > 0:
		b, err := os.ReadFile(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "corral sh: %v\n", err)
			return exitError{127}
		}
		text, name, params = string(b), pos[0], pos[1:]
	default:
		fmt.Fprintln(stderr, "corral sh: want -c 'SCRIPT' or a script FILE (see corral sh --help)")
		return exitError{2}
	}

	ws, err := sandbox.OpenWorkspace(*workspace)
	if err != nil {
		return err
	}
	defer ws.Close()
	dir := ws.Dir()
	if cwd, err := os.Getwd(); err == nil {
		if _, err := ws.Resolve(cwd); err == nil {
			dir = cwd
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res := shell.Run(ctx, shell.Options{
		Workspace: ws,
		Dir:       dir,
		Timeout:   *timeout,
		Stdin:     terminalSafe(stdin),
		Stdout:    stdout,
		Stderr:    stderr,
		Name:      name,
		Args:      params,
	}, text)
	if res.Fallback != "" {
		fmt.Fprintf(stderr, "corral sh: %s\n", res.Fallback)
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(stderr, "corral sh: timed out after %s - process tree killed\n", *timeout)
	case res.Interrupted:
		fmt.Fprintln(stderr, "corral sh: interrupted - process tree killed")
	}
	if res.ExitCode != 0 {
		return exitError{res.ExitCode}
	}
	return nil
}

// terminalSafe hides a terminal behind a plain reader. Programs run in their
// own process groups, so one reading the terminal directly would be stopped
// by SIGTTIN; given a reader, the interpreter feeds them through a pipe from
// corral, which stays in the foreground.
func terminalSafe(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok && agent.IsTerminal(f) {
		return struct{ io.Reader }{f}
	}
	return r
}
