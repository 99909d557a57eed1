package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
	"mvdan.cc/sh/x/coreutils"

	"corral/sandbox"
)

// Exit codes of a run that did not finish by itself, as timeout(1) and
// shells report them.
const (
	ExitTimeout     = 124
	ExitInterrupted = 130
)

// Options configure one run.
type Options struct {
	// Workspace is the confinement root of the shell's own file access.
	// Required.
	Workspace *sandbox.Workspace
	// Dir is the starting directory; empty means the workspace root.
	Dir string
	// Timeout bounds the run; zero means none.
	Timeout time.Duration
	// Env is the environment as NAME=VALUE pairs; nil means corral's own.
	// The variables in SecretEnv are removed either way.
	Env []string
	// Stdin is the script's input; nil means empty, EOF at once.
	Stdin io.Reader
	// Stdout and Stderr receive the output as it comes; when nil, the output
	// is captured into the Result, head and tail, in bounded memory.
	Stdout, Stderr io.Writer
	// Name is $0, and Args are $1 and on.
	Name string
	Args []string
}

// Result is the outcome of a run.
type Result struct {
	// Stdout and Stderr are the captured output, with a marker where the
	// middle of a long output was left out. Empty when Options gave writers.
	Stdout, Stderr string
	ExitCode       int
	// TimedOut reports that the timeout ended the run; Interrupted that the
	// caller's context did (Ctrl-C). Either way the process tree was killed.
	TimedOut    bool
	Interrupted bool
	Timeout     time.Duration
	// Fallback, when not empty, says in one line that the system shell ran
	// the script, or could not, and why.
	Fallback string

	stdout, stderr *HeadTail
}

// Run parses script and runs it, with the embedded interpreter or, for a
// script it cannot run, with the system shell, and kills everything the
// script started before it returns.
func Run(ctx context.Context, opts Options, script string) Result {
	if opts.Workspace == nil {
		return Result{ExitCode: 2, Stderr: "corral: no workspace to run the script in\n"}
	}
	if opts.Dir == "" {
		opts.Dir = opts.Workspace.Dir()
	}
	if opts.Name == "" {
		opts.Name = "corral"
	}
	res := Result{Timeout: opts.Timeout}
	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		res.stdout = NewHeadTail(MaxChars)
		stdout = res.stdout
	}
	if stderr == nil {
		res.stderr = NewHeadTail(MaxChars)
		stderr = res.stderr
	}

	var runCtx context.Context
	var cancel context.CancelFunc
	if opts.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
	} else {
		runCtx, cancel = context.WithCancel(ctx)
	}
	e := &engine{
		opts:   opts,
		tree:   newTree(),
		stdout: stdout,
		stderr: stderr,
		env:    baseEnv(opts.Env),
	}

	var code int
	var err error
	file, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), opts.Name)
	if perr != nil {
		code, res.Fallback = e.fallback(runCtx, script, "the embedded shell could not parse it ("+perr.Error()+")")
	} else if why := unsupported(file); why != "" {
		code, res.Fallback = e.fallback(runCtx, script, "the embedded shell cannot run "+why)
	} else {
		code, err = e.interpret(runCtx, file)
	}
	// Whether the script was cut short is read before cancel, which ends
	// the context of a script that finished by itself too.
	cutShort := runCtx.Err() != nil
	// Always: background jobs run until the context ends, and every group
	// and orphan the script left is killed here.
	cancel()
	e.tree.kill()

	switch {
	case cutShort && ctx.Err() != nil:
		res.Interrupted, code = true, ExitInterrupted
	case cutShort:
		res.TimedOut, code = true, ExitTimeout
	case err != nil:
		fmt.Fprintf(stderr, "corral: %v\n", err)
	}
	res.ExitCode = code
	if res.stdout != nil {
		res.Stdout = res.stdout.String()
	}
	if res.stderr != nil {
		res.Stderr = res.stderr.String()
	}
	return res
}

type engine struct {
	opts           Options
	tree           *tree
	stdout, stderr io.Writer
	env            []string
	calls          atomic.Uint64 // simple commands run, for depthGuard
}

func (e *engine) interpret(ctx context.Context, file *syntax.File) (code int, err error) {
	// A panic inside the interpreter must not take corral down with it.
	defer func() {
		if p := recover(); p != nil {
			code, err = 1, fmt.Errorf("the embedded shell failed: %v", p)
		}
	}()
	r, err := e.newRunner(e.opts.Dir, expand.ListEnviron(e.env...), e.opts.Stdin, e.stdout, e.stderr)
	if err != nil {
		return 1, err
	}
	r.Params = e.opts.Args
	return exitCode(r.Run(ctx, file))
}

// exitCode turns the interpreter's error into an exit code, and returns the
// error itself when it was not just a status.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var es interp.ExitStatus
	if errors.As(err, &es) {
		return int(es), nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 1, nil
	}
	return 1, err
}

func (e *engine) newRunner(dir string, env expand.Environ, stdin io.Reader, stdout, stderr io.Writer) (*interp.Runner, error) {
	c := confine{ws: e.opts.Workspace}
	return interp.New(
		interp.Dir(dir),
		interp.Env(env),
		interp.StdIO(stdin, stdout, stderr),
		interp.ExecHandlers(e.execMiddleware),
		interp.OpenHandler(c.open),
		interp.ReadDirHandler2(c.readDir),
		interp.StatHandler(c.stat),
		interp.AccessHandler(c.access),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			if e.calls.Add(1)%depthCheckEvery == 0 {
				if err := depthGuard(); err != nil {
					return nil, err
				}
			}
			return c.call(ctx, args)
		}),
	)
}

// execMiddleware replaces the interpreter's exec handler: programs on PATH
// run in the run's process tree; a name that is not on PATH is offered to
// the Go coreutils, so that ls, cat, cp, mv, rm or mkdir work on a machine
// that lacks them. The coreutils are programs too: they are not confined
// by the shell-level checks.
func (e *engine) execMiddleware(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	notFound := func(ctx context.Context, args []string) error {
		fmt.Fprintf(interp.HandlerCtx(ctx).Stderr, "%s: command not found\n", args[0])
		return interp.ExitStatus(127)
	}
	stand := coreutils.ExecHandler(notFound)
	return func(ctx context.Context, args []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		hc := interp.HandlerCtx(ctx)
		path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
		if err != nil {
			return standIn(ctx, hc, stand, args)
		}
		cmd := exec.Command(path)
		cmd.Args = args
		cmd.Env = execEnv(hc.Env)
		cmd.Dir = hc.Dir
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinOf(hc.Stdin), hc.Stdout, hc.Stderr
		err = e.tree.run(ctx, cmd)
		if isENOEXEC(err) {
			return e.runScriptFile(ctx, hc, path, args)
		}
		return statusOf(ctx, hc.Stderr, err)
	}
}

// standIn runs a Go coreutil, whose panic must not take corral down.
func standIn(ctx context.Context, hc interp.HandlerContext, stand interp.ExecHandlerFunc, args []string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(hc.Stderr, "%s: failed: %v\n", args[0], p)
			err = interp.ExitStatus(2)
		}
	}()
	return stand(ctx, args)
}

// stdinOf passes the interpreter's input on. A nil input, the empty one,
// must stay an untyped nil, which os/exec turns into the null device.
func stdinOf(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok && f == nil || r == nil {
		return nil
	}
	return r
}

// statusOf turns a program's end into what the interpreter expects.
func statusOf(ctx context.Context, stderr io.Writer, err error) error {
	if err == nil || errors.Is(err, exec.ErrWaitDelay) {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if sig, ok := signalOf(ee); ok {
			return interp.ExitStatus(128 + sig)
		}
		return interp.ExitStatus(uint8(ee.ExitCode()))
	}
	if errors.Is(err, errRunOver) {
		return ctx.Err()
	}
	fmt.Fprintln(stderr, err)
	var pe *os.PathError
	if errors.As(err, &pe) && errors.Is(pe.Err, os.ErrPermission) {
		return interp.ExitStatus(126)
	}
	return interp.ExitStatus(127)
}

// runScriptFile runs a file the kernel would not execute (a script without
// a "#!" line) with the embedded shell, as bash would run it with itself,
// keeping the run's confinement and process tree.
func (e *engine) runScriptFile(ctx context.Context, hc interp.HandlerContext, path string, args []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(hc.Stderr, err)
		return interp.ExitStatus(126)
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(string(b)), args[0])
	if err != nil {
		fmt.Fprintln(hc.Stderr, err)
		return interp.ExitStatus(2)
	}
	r, err := e.newRunner(hc.Dir, expand.ListEnviron(execEnv(hc.Env)...), hc.Stdin, hc.Stdout, hc.Stderr)
	if err != nil {
		return err
	}
	r.Params = args[1:]
	err = r.Run(ctx, file)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var es interp.ExitStatus
	if err != nil && errors.As(err, &es) {
		return es
	}
	if err != nil {
		fmt.Fprintln(hc.Stderr, err)
		return interp.ExitStatus(1)
	}
	return nil
}

// execEnv lists the exported variables, as the interpreter would pass them
// to a program.
func execEnv(env expand.Environ) []string {
	list := make([]string, 0, 64)
	for name, vr := range env.Each {
		if vr.Exported && vr.Kind == expand.String && vr.IsSet() && !isSecret(name) {
			list = append(list, name+"="+vr.String())
		}
	}
	return list
}

// maxFrames bounds the Go stack of the interpreter, about a dozen frames
// per level of function, source or eval nesting. Runaway recursion
// (`f() { f; }; f`) would otherwise grow the stack to Go's limit before the
// timeout, and a stack overflow kills the whole process, not just the run.
const maxFrames = 30000

var errTooDeep = fmt.Errorf("the script nests functions, source or eval too deeply (about %d levels); stopped", maxFrames/12)

// depthCheckEvery spaces out the checks: one costs a walk of the whole
// stack once the recursion is deep, and a few dozen levels more or less do
// not matter.
const depthCheckEvery = 128

// depthGuard fails once the stack is deeper than maxFrames. Skipping that
// many frames to find one more costs nothing at an ordinary depth.
func depthGuard() error {
	var pc [1]uintptr
	if runtime.Callers(maxFrames, pc[:]) > 0 {
		return errTooDeep
	}
	return nil
}
