package sandbox

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// rootFS is the guest's view of the workspace: a wazero file system whose
// every operation goes through an os.Root.
//
// wazero's own directory mount resolves guest paths with ordinary host calls,
// so a symlink planted in the workspace leads the guest anywhere on the host.
// Going through os.Root instead makes the kernel (openat2 with
// RESOLVE_BENEATH, or os.Root's component-wise walk where that is missing)
// refuse every path that leaves the root, however it is spelled and whatever
// is swapped in under it while it is being resolved.
//
// Errno conventions, relied on by the guest to word its results: EPERM means
// the path escapes the root and nothing else (a permission failure of the
// host's own becomes EACCES), and ENOTSUP means the path names something
// that is neither a regular file nor a directory (a FIFO, whose open would
// block forever, or a device).
type rootFS struct {
	experimentalsys.UnimplementedFS // Chmod, Utimens: ENOSYS
	root                            *os.Root
	ctx                             atomic.Pointer[context.Context] // of the call under way
}

// interrupted reports whether the call under way has been cancelled or has
// passed its deadline. Every operation of the mount and of its files asks
// first and fails with EIO if so (not EINTR, which Go's I/O retries): the guest cannot go on long without
// reading, listing or writing something, so this is how a deadline stops
// it, at the next operation. A blocking system call already under way is
// not interrupted, and nor would a guest computing in a loop that touches
// no file be; the guest's loops are all bounded by the data it reads.
func (r *rootFS) interrupted() bool {
	c := r.ctx.Load()
	return c != nil && (*c).Err() != nil
}

func guestName(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "/"))
	if p == "" || p == "/" {
		return "."
	}
	return p
}

// errno converts an error from os.Root into the guest's terms.
func errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var se syscall.Errno
	if errors.As(err, &se) {
		if se == syscall.EPERM {
			return experimentalsys.EACCES
		}
		return experimentalsys.UnwrapOSError(se)
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return experimentalsys.EPERM
	}
	switch e := experimentalsys.UnwrapOSError(err); e {
	case experimentalsys.EPERM:
		return experimentalsys.EACCES
	default:
		return e
	}
}

// osFlags maps wazero's open flags to package os's. Their access modes
// differ: wazero's O_RDWR and O_WRONLY are the reverse of os's.
func osFlags(flag experimentalsys.Oflag) int {
	var f int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		f = os.O_RDWR
	case experimentalsys.O_WRONLY:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	if flag&experimentalsys.O_APPEND != 0 {
		f |= os.O_APPEND
	}
	if flag&experimentalsys.O_CREAT != 0 {
		f |= os.O_CREATE
	}
	if flag&experimentalsys.O_EXCL != 0 {
		f |= os.O_EXCL
	}
	if flag&experimentalsys.O_TRUNC != 0 {
		f |= os.O_TRUNC
	}
	if flag&experimentalsys.O_SYNC != 0 {
		f |= os.O_SYNC
	}
	return f | nonblockFlag
}

func (r *rootFS) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if r.interrupted() {
		return nil, experimentalsys.EIO
	}
	name = guestName(name)
	// New files start private (wazero asks for 0600); the host gives them
	// their final mode once it knows what that should be.
	f, err := r.root.OpenFile(name, osFlags(flag), perm&0o700)
	if err != nil {
		return nil, errno(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errno(err)
	}
	switch {
	case st.IsDir():
		if flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY) != 0 {
			f.Close()
			return nil, experimentalsys.EISDIR
		}
	case !st.Mode().IsRegular():
		f.Close()
		return nil, experimentalsys.ENOTSUP
	case flag&experimentalsys.O_DIRECTORY != 0:
		f.Close()
		return nil, experimentalsys.ENOTDIR
	}
	return &rootFile{fs: r, f: f, dir: st.IsDir(), append: flag&experimentalsys.O_APPEND != 0}, 0
}

func (r *rootFS) Lstat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return r.stat(r.root.Lstat, name)
}

func (r *rootFS) Stat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return r.stat(r.root.Stat, name)
}

func (r *rootFS) stat(stat func(string) (fs.FileInfo, error), name string) (sys.Stat_t, experimentalsys.Errno) {
	if r.interrupted() {
		return sys.Stat_t{}, experimentalsys.EIO
	}
	st, err := stat(guestName(name))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(st), 0
}

func (r *rootFS) Mkdir(name string, _ fs.FileMode) experimentalsys.Errno {
	if r.interrupted() {
		return experimentalsys.EIO
	}
	return errno(r.root.Mkdir(guestName(name), 0o777))
}

func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	if r.interrupted() {
		return experimentalsys.EIO
	}
	return errno(r.root.Rename(guestName(from), guestName(to)))
}

func (r *rootFS) Rmdir(name string) experimentalsys.Errno { return r.remove(name, true) }

func (r *rootFS) Unlink(name string) experimentalsys.Errno { return r.remove(name, false) }

// remove removes name if it is a directory (dir) or is not one (!dir).
func (r *rootFS) remove(name string, dir bool) experimentalsys.Errno {
	if r.interrupted() {
		return experimentalsys.EIO
	}
	name = guestName(name)
	st, err := r.root.Lstat(name)
	switch {
	case err != nil:
		return errno(err)
	case dir && !st.IsDir():
		return experimentalsys.ENOTDIR
	case !dir && st.IsDir():
		return experimentalsys.EISDIR
	}
	return errno(r.root.Remove(name))
}

func (r *rootFS) Readlink(name string) (string, experimentalsys.Errno) {
	if r.interrupted() {
		return "", experimentalsys.EIO
	}
	dst, err := r.root.Readlink(guestName(name))
	if err != nil {
		return "", errno(err)
	}
	return dst, 0
}

// Symlink is refused: a link the guest made could be aimed anywhere, and
// though os.Root would not follow it out, other programs would.
func (r *rootFS) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

// Link is refused for the same reason as Symlink.
func (r *rootFS) Link(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

// rootFile is a file opened through the os.Root.
//
// It has no Seek (UnimplementedFile's says ENOSYS): the guest reads files
// front to back or at offsets, and lists a directory once, from the start.
// That also keeps go vet's check of io.Seeker's signature quiet.
type rootFile struct {
	experimentalsys.UnimplementedFile
	fs     *rootFS
	f      *os.File
	list   *os.File // for reading f as a directory; see listHandle
	dir    bool
	append bool
}

func (f *rootFile) IsDir() (bool, experimentalsys.Errno) { return f.dir, 0 }

// usable says why f's contents cannot be read or written now, or 0.
func (f *rootFile) usable() experimentalsys.Errno {
	switch {
	case f.fs.interrupted():
		return experimentalsys.EIO
	case f.dir:
		return experimentalsys.EISDIR
	}
	return 0
}
func (f *rootFile) IsAppend() bool { return f.append }

func (f *rootFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.fs.interrupted() {
		return sys.Stat_t{}, experimentalsys.EIO
	}
	st, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(st), 0
}

func (f *rootFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if e := f.usable(); e != 0 {
		return 0, e
	}
	n, err := f.f.Read(buf)
	if err == io.EOF {
		err = nil
	}
	return n, errno(err)
}

func (f *rootFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if e := f.usable(); e != 0 {
		return 0, e
	}
	n, err := f.f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, errno(err)
}

func (f *rootFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.fs.interrupted() {
		return nil, experimentalsys.EIO
	}
	if !f.dir {
		return nil, experimentalsys.EBADF
	}
	if f.list == nil {
		f.list = listHandle(f.f)
	}
	entries, err := f.list.ReadDir(n)
	if err == io.EOF {
		err = nil
	}
	dirents := make([]experimentalsys.Dirent, len(entries))
	for i, e := range entries {
		dirents[i] = experimentalsys.Dirent{Name: e.Name(), Type: e.Type()}
	}
	return dirents, errno(err)
}

func (f *rootFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if e := f.usable(); e != 0 {
		return 0, e
	}
	n, err := f.f.Write(buf)
	return n, errno(err)
}

func (f *rootFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if e := f.usable(); e != 0 {
		return 0, e
	}
	n, err := f.f.WriteAt(buf, off)
	return n, errno(err)
}

func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if e := f.usable(); e != 0 {
		return e
	}
	return errno(f.f.Truncate(size))
}

func (f *rootFile) Sync() experimentalsys.Errno     { return errno(f.f.Sync()) }
func (f *rootFile) Datasync() experimentalsys.Errno { return errno(f.f.Sync()) }
func (f *rootFile) Close() experimentalsys.Errno {
	if f.list != nil && f.list != f.f {
		f.list.Close()
	}
	return errno(f.f.Close())
}
