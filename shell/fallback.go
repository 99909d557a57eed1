package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
)

// unixShell is the last resort on Unix; a variable so that tests can take it
// away.
var unixShell = "/bin/sh"

// systemShell finds the shell that runs what the embedded one cannot:
// ps-bash, then bash, on PATH, then /bin/sh on Unix or cmd.exe on Windows.
// It returns the program and the arguments that come before the script.
func (e *engine) systemShell() (path string, pre []string, ok bool) {
	look := func(name string) (string, bool) {
		p, err := lookPath(e.env, name)
		return p, err == nil
	}
	for _, name := range []string{"ps-bash", "bash"} {
		if p, ok := look(name); ok {
			return p, []string{"-c"}, true
		}
	}
	if runtime.GOOS == "windows" {
		if p, ok := look("cmd.exe"); ok {
			return p, []string{"/c"}, true
		}
		return "", nil, false
	}
	if unixShell != "" {
		if _, err := exec.LookPath(unixShell); err == nil {
			return unixShell, []string{"-c"}, true
		}
	}
	return "", nil, false
}

// fallback runs the whole script with the system shell, under the same
// timeout, process tree and output handling, and returns its exit code and
// the one line that says so.
func (e *engine) fallback(ctx context.Context, script, why string) (int, string) {
	path, pre, ok := e.systemShell()
	if !ok {
		looked := "ps-bash and bash on PATH, and " + unixShell
		if runtime.GOOS == "windows" {
			looked = "ps-bash, bash and cmd.exe on PATH"
		}
		note := fmt.Sprintf("not run: %s, and no system shell was found to run it instead (looked for %s)", why, looked)
		return 127, note
	}
	args := append([]string{path}, pre...)
	args = append(args, script)
	if pre[0] == "-c" {
		args = append(args, e.opts.Name)
		args = append(args, e.opts.Args...)
	}
	cmd := exec.Command(path)
	cmd.Args = args
	if pre[0] == "/c" {
		cmdExeLine(cmd, path, script)
	}
	cmd.Env = append([]string(nil), e.env...)
	cmd.Dir = e.opts.Dir
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	stdin, closeStdin, err := fileStdin(e.opts.Stdin)
	if err != nil {
		return 126, fmt.Sprintf("not run: %s, and the system shell's input could not be set up: %v", why, err)
	}
	cmd.Stdin = stdin
	note := fmt.Sprintf("ran with the system shell %s: %s", path, why)
	err = e.tree.run(ctx, cmd)
	closeStdin()
	if err == nil {
		return 0, note
	}
	if ctx.Err() != nil {
		return 1, note
	}
	st := statusOf(ctx, e.stderr, err)
	code, _ := exitCode(st)
	return code, note
}

// fileStdin turns a reader that is not a file into a pipe, as the
// interpreter does for its programs. Given a plain reader, os/exec would copy
// it in a goroutine that Wait waits for, and a reader on a terminal only
// returns when the user types a line.
func fileStdin(r io.Reader) (io.Reader, func(), error) {
	switch r := r.(type) {
	case nil:
		return nil, func() {}, nil
	case *os.File:
		return r, func() {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return pr, func() { pr.Close() }, nil
}
