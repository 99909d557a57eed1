package sandbox

import (
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"corral/sandbox/internal/fileops"
)

//go:generate go run ./internal/guestgen

// guestWasm is the file tools' guest, built from internal/guest and
// internal/fileops. guest.wasm.sum records the hash of those sources, and a
// test fails when they change without the module being generated again.
//
//go:embed guest.wasm
var guestWasm []byte

// The types the guest speaks in.
type (
	Stamp       = fileops.Stamp
	ReadReply   = fileops.ReadReply
	Entry       = fileops.Entry
	EditRequest = fileops.EditRequest
	EditReply   = fileops.EditReply
	// FileError is a failure of a file operation; its Kind says which.
	FileError = fileops.Error
	FileKind  = fileops.Kind
)

// The kinds of FileError.
const (
	KindOther      = fileops.Other
	KindNotExist   = fileops.NotExist
	KindIsDir      = fileops.IsDir
	KindNotDir     = fileops.NotDir
	KindEscapes    = fileops.Escapes
	KindBinary     = fileops.Binary
	KindChanged    = fileops.Changed
	KindSpecial    = fileops.Special
	KindPermission = fileops.Permission
	KindTooLarge   = fileops.TooLarge
	KindExists     = fileops.Exists
)

// KindOf returns the kind of err, a *FileError, or 0 for anything else.
func KindOf(err error) FileKind {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return 0
}

const (
	// maxInstances bounds the guests alive at once; a call needs one to
	// itself, because a wazero function is not safe for concurrent use.
	maxInstances = 4
	// recycleAt is the linear memory past which a guest is closed after
	// its call rather than reused: Wasm memory grows but never shrinks, so
	// one large edit would otherwise pin its peak for good.
	recycleAt = 64 << 20
)

// Guest runs the file tools' I/O inside a WASI module that sees only the
// workspace, mounted at / through an os.Root (see rootFS).
//
// The module is compiled once, in the background from NewGuest on, and kept
// in a compilation cache on disk so later processes skip the second or so
// that compiling takes.
// Instances are long-lived reactors, pooled and reused across calls.
type Guest struct {
	ws    *Workspace
	rt    wazero.Runtime
	cfg   wazero.ModuleConfig
	ready chan struct{} // closed once compiled (or failed to)
	mod   wazero.CompiledModule
	err   error

	idle  chan *instance
	slots chan struct{} // one per live instance
}

type instance struct {
	fs          *rootFS
	mod         api.Module
	alloc, call api.Function
	buf, size   uint32 // the guest's request buffer: where, and how large
}

// NewGuest prepares the guest for ws. Compilation starts in the background,
// cached under cacheDir when that is not empty.
func NewGuest(ws *Workspace, cacheDir string) *Guest {
	ctx := context.Background()
	// Not WithCloseOnContextDone: the termination checks it compiles into
	// every loop made the guest's byte loops 20 to 30 times slower (a 1 MiB
	// read took 95 ms instead of 12). The deadline reaches the guest through
	// its file system instead; see rootFS.interrupted.
	rc := wazero.NewRuntimeConfig()
	if cacheDir != "" {
		if cache, err := wazero.NewCompilationCacheWithDir(cacheDir); err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	g := &Guest{
		ws:    ws,
		rt:    wazero.NewRuntimeWithConfig(ctx, rc),
		ready: make(chan struct{}),
		idle:  make(chan *instance, maxInstances),
		slots: make(chan struct{}, maxInstances),
	}
	g.cfg = wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithRandSource(rand.Reader).
		WithSysWalltime().
		WithSysNanotime()
	go func() {
		defer close(g.ready)
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, g.rt); err != nil {
			g.err = fmt.Errorf("guest: wasi: %w", err)
			return
		}
		g.mod, g.err = g.rt.CompileModule(ctx, guestWasm)
		if g.err != nil {
			g.err = fmt.Errorf("guest: compile: %w", g.err)
			return
		}
		// Have one instance waiting, so the first call pays for neither.
		g.slots <- struct{}{}
		in, err := g.instantiate(ctx)
		if err != nil {
			<-g.slots
			return
		}
		g.idle <- in
	}()
	return g
}

// CacheDir returns where compiled guests are cached, or "" when the user has
// no cache directory.
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "corral", "wazero")
}

// Close releases the guest and every instance of it.
func (g *Guest) Close() error {
	<-g.ready
	return g.rt.Close(context.Background())
}

func (g *Guest) instantiate(ctx context.Context) (*instance, error) {
	// Each instance has a mount of its own, which carries its call's
	// context.
	fsys := &rootFS{root: g.ws.Root()}
	mount := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(fsys, "/")
	mod, err := g.rt.InstantiateModule(ctx, g.mod, g.cfg.WithFSConfig(mount))
	if err != nil {
		return nil, fmt.Errorf("guest: instantiate: %w", err)
	}
	in := &instance{fs: fsys, mod: mod, alloc: mod.ExportedFunction("alloc"), call: mod.ExportedFunction("call")}
	if in.alloc == nil || in.call == nil {
		mod.Close(ctx)
		return nil, errors.New("guest: module lacks its exports")
	}
	return in, nil
}

func (g *Guest) get(ctx context.Context) (*instance, error) {
	select {
	case <-g.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if g.err != nil {
		return nil, g.err
	}
	select {
	case in := <-g.idle:
		return in, nil
	default:
	}
	select {
	case in := <-g.idle:
		return in, nil
	case g.slots <- struct{}{}:
		in, err := g.instantiate(ctx)
		if err != nil {
			<-g.slots
		}
		return in, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *Guest) put(in *instance, broken bool) {
	if broken || in.mod.Memory().Size() > recycleAt {
		in.mod.Close(context.Background())
		<-g.slots
		return
	}
	g.idle <- in
}

// roundTrip sends one encoded request to a guest and returns a copy of its
// reply. A guest that failed, or whose call was cut off by ctx, is dropped.
func (g *Guest) roundTrip(ctx context.Context, req []byte) ([]byte, error) {
	in, err := g.get(ctx)
	if err != nil {
		return nil, err
	}
	reply, err := in.exchange(ctx, req)
	g.put(in, err != nil)
	if ctx.Err() != nil {
		// Whatever the guest made of its failing file system, the
		// reason is the context's.
		return nil, ctx.Err()
	}
	return reply, err
}

func (in *instance) exchange(ctx context.Context, req []byte) ([]byte, error) {
	in.fs.ctx.Store(&ctx)
	defer in.fs.ctx.Store(nil)
	if uint32(len(req)) > in.size {
		size := max(uint32(len(req)), 64<<10)
		res, err := in.alloc.Call(ctx, uint64(size))
		if err != nil {
			return nil, fmt.Errorf("guest: alloc: %w", err)
		}
		in.buf, in.size = uint32(res[0]), size
	}
	mem := in.mod.Memory()
	if !mem.Write(in.buf, req) {
		return nil, errors.New("guest: request out of range")
	}
	res, err := in.call.Call(ctx, uint64(len(req)))
	if err != nil {
		return nil, fmt.Errorf("guest: call: %w", err)
	}
	ptr, n := uint32(res[0]>>32), uint32(res[0])
	view, ok := mem.Read(ptr, n)
	if !ok {
		return nil, errors.New("guest: reply out of range")
	}
	// view aliases guest memory, which the next call overwrites.
	return append([]byte(nil), view...), nil
}

func (g *Guest) client(ctx context.Context) fileops.Client {
	return fileops.Client{Send: func(req []byte) ([]byte, error) { return g.roundTrip(ctx, req) }}
}

// ReadFile reads up to limit lines (0: no limit) of the file rel from line
// offset (1-based), stopping before budget characters.
func (g *Guest) ReadFile(ctx context.Context, rel string, offset, limit, budget int) (ReadReply, error) {
	return g.client(ctx).Read(filepath.ToSlash(rel), offset, limit, budget)
}

// ListDir returns the entries of the directory rel, sorted by name.
func (g *Guest) ListDir(ctx context.Context, rel string) ([]Entry, error) {
	return g.client(ctx).List(filepath.ToSlash(rel))
}

// Edit replaces req.Old with req.New in the file req.Rel, atomically: the
// guest writes the new contents beside the file, the host gives them the
// file's mode (WASI has no chmod), and the guest renames them over it. The
// reply's Stamp is the file's after the edit, or, for a dry run, now.
func (g *Guest) Edit(ctx context.Context, req EditRequest) (EditReply, error) {
	req.Rel = filepath.ToSlash(req.Rel)
	c := g.client(ctx)
	rep, err := c.Edit(req)
	if err != nil || req.DryRun || rep.Count != 1 {
		return rep, err
	}
	mode := fs.FileMode(newFileMode)
	if !rep.Created {
		if st, err := g.ws.Root().Stat(filepath.FromSlash(rep.Target)); err == nil {
			mode = st.Mode().Perm()
		}
	}
	if err := g.chmod(filepath.FromSlash(rep.Temp), mode); err != nil {
		c.Remove(rep.Temp)
		return EditReply{}, &FileError{Kind: KindOther, Msg: err.Error()}
	}
	rep.Stamp, err = c.Rename(rep.Temp, rep.Target)
	rep.Temp = ""
	return rep, err
}

// chmod sets the mode through an open handle, so that nothing swapped in
// for the file after it was opened can be changed instead.
func (g *Guest) chmod(rel string, mode fs.FileMode) error {
	f, err := g.ws.Root().OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("set mode: %w", err)
	}
	defer f.Close()
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("set mode: %w", err)
	}
	return nil
}
