package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"mvdan.cc/sh/v3/interp"

	"corral/sandbox"
)

// confine holds the handlers through which the interpreter's own file access
// goes: each path is first checked lexically by sandbox.TryResolve, whose
// refusal is the message the script prints, then opened through the
// workspace's os.Root, so that a symlink cannot lead outside either.
//
// This covers what the shell itself touches. Programs the script starts are
// separate processes and are not confined by it.
type confine struct {
	ws *sandbox.Workspace
}

// resolve returns path, relative to the interpreter's current directory,
// relative to the workspace root.
func (c confine) resolve(ctx context.Context, path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(interp.HandlerCtx(ctx).Dir, path)
	}
	rel, err := c.ws.Resolve(abs)
	if err != nil {
		// The refusal names the path as the script wrote it.
		return "", &sandbox.RefusedError{Path: path}
	}
	return rel, nil
}

// refused wraps a refusal as the *os.PathError the interpreter prints and
// survives; any other error type would halt the whole script.
func refused(op, path string, err error) error {
	return &os.PathError{Op: op, Path: path, Err: err}
}

// rootErr rewrites an os.Root error, which names the path relative to the
// root, to name the path as the script wrote it.
func rootErr(op, path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &os.PathError{Op: op, Path: path, Err: pe.Err}
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

type nopCloser struct {
	io.Reader
	io.Writer
}

func (nopCloser) Close() error { return nil }

func (c confine) open(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	// The few device names scripts write to all the time. /dev/stdout and
	// /dev/stderr go to the script's own streams rather than to whatever
	// file corral's descriptors happen to be (opening one with O_TRUNC would
	// truncate corral's output file).
	switch path {
	case "/dev/null":
		return os.OpenFile(os.DevNull, flag, perm)
	case "/dev/stdout":
		return nopCloser{Reader: eofReader{}, Writer: hc.Stdout}, nil
	case "/dev/stderr":
		return nopCloser{Reader: eofReader{}, Writer: hc.Stderr}, nil
	case "/dev/stdin":
		in := hc.Stdin
		if in == nil {
			in = eofReader{}
		}
		return nopCloser{Reader: in, Writer: io.Discard}, nil
	}
	if runtime.GOOS == "windows" && path == "NUL" {
		return os.OpenFile(os.DevNull, flag, perm)
	}
	if path == "" {
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	}
	rel, err := c.resolve(ctx, path)
	if err != nil {
		return nil, refused("open", path, err)
	}
	f, err := c.ws.Root().OpenFile(rel, flag, perm)
	if err != nil {
		return nil, rootErr("open", path, err)
	}
	return f, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// readDir lists a directory for globbing. A directory outside the workspace
// reads as empty without an error, which keeps the pattern literal, as bash
// does for a directory it cannot read: `echo ../*` prints "../*".
func (c confine) readDir(ctx context.Context, path string) ([]fs.DirEntry, error) {
	rel, err := c.resolve(ctx, path)
	if err != nil {
		return nil, nil
	}
	f, err := c.ws.Root().Open(rel)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil
	}
	return entries, nil
}

// stat answers file tests and cd. Outside the workspace nothing exists.
func (c confine) stat(ctx context.Context, path string, follow bool) (fs.FileInfo, error) {
	rel, err := c.resolve(ctx, path)
	if err != nil {
		return nil, refused("stat", path, err)
	}
	var info fs.FileInfo
	if follow {
		info, err = c.ws.Root().Stat(rel)
	} else {
		info, err = c.ws.Root().Lstat(rel)
	}
	if err != nil {
		return nil, rootErr("stat", path, err)
	}
	return info, nil
}

// access answers -r, -w, -x and cd's permission check. The os.Root stat
// proves the path stays inside through any symlinks; the permission itself
// is then the platform's own check.
func (c confine) access(ctx context.Context, path string, mode interp.AccessMode) error {
	rel, err := c.resolve(ctx, path)
	if err != nil {
		return refused("access", path, err)
	}
	if _, err := c.ws.Root().Stat(rel); err != nil {
		return rootErr("access", path, err)
	}
	return interp.DefaultAccessHandler()(ctx, path, mode)
}

// call refuses cd and pushd out of the workspace with the sandbox's own
// message; the interpreter would only say "no such file or directory".
// A handler cannot set an exit status, so the refused command is replaced
// with `false` after the message is printed.
func (c confine) call(ctx context.Context, args []string) ([]string, error) {
	if args[0] != "cd" && args[0] != "pushd" {
		return args, nil
	}
	hc := interp.HandlerCtx(ctx)
	var target string
	switch {
	case len(args) == 1 && args[0] == "cd":
		target = hc.Env.Get("HOME").String()
	case len(args) == 2 && args[1] == "-":
		target = hc.Env.Get("OLDPWD").String()
	case len(args) == 2:
		target = args[1]
	default:
		return args, nil
	}
	if target == "" {
		return args, nil
	}
	if _, err := c.resolve(ctx, target); err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return []string{"false"}, nil
	}
	return args, nil
}
