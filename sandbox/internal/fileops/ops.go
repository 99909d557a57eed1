// Package fileops is the file tools' I/O: reading a window of a text file,
// listing a directory, and replacing a string in a file atomically.
//
// The same code runs in two places. Compiled to wasip1 it is the guest that
// sandbox runs under wazero, where the only file system it can see is the
// workspace, mounted through an os.Root. Compiled for the host it is the
// baseline the benchmarks compare the guest with, so that they measure what
// the second layer costs and nothing else.
package fileops

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
	"unsafe"
)

// MaxEditSize bounds the files edit_file will load whole.
const MaxEditSize = 32 << 20

// Stamp tells whether a file changed between two looks at it.
type Stamp struct {
	Size    int64
	ModTime int64 // nanoseconds
}

func stampOf(st fs.FileInfo) Stamp {
	return Stamp{Size: st.Size(), ModTime: st.ModTime().UnixNano()}
}

// ReadReply is what Read found.
type ReadReply struct {
	Text  string // whole lines from line First, within the character budget
	First int    // 1-based number of the first line in Text
	Last  int    // number of the last line in Text; First-1 when none
	More  bool   // lines follow Last
	Cut   bool   // line Last was longer than the budget and is cut short
	Lines int    // the file's line count when the read reached its end, else 0
	Size  int64
	Stamp Stamp
}

// Entry is one directory entry.
type Entry struct {
	Name string
	Dir  bool
}

// EditRequest asks for Old to be replaced with New in the file Rel.
type EditRequest struct {
	Rel      string
	Old, New string
	Expect   *Stamp // refuse with Changed unless the file still has this stamp
	DryRun   bool   // check only; write nothing
}

// EditReply says what Edit found, and where it wrote.
type EditReply struct {
	Created bool   // the file did not exist
	Count   int    // occurrences of Old (overlapping ones count); edits need 1
	Target  string // the file edited, after following symlinks inside the root
	Temp    string // the new contents, to be renamed over Target
	Stamp   Stamp  // Target's stamp before the edit
}

// Ops runs the file operations on the tree below Dir.
type Ops struct {
	Dir string // "/" in the guest
}

func (o Ops) name(rel string) (string, error) {
	// The host sends what TryResolve produced: a clean relative path. This
	// is a check of that contract, not a second path check; anything else is
	// a bug or an attack, and is refused the same way.
	if rel != "." && (path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../")) {
		return "", &Error{Kind: Escapes}
	}
	return path.Join(o.Dir, rel), nil
}

// Read reads up to limit lines (0: no limit) from line offset (1-based),
// stopping before the text would pass budget characters. It never reads
// further into the file than it must, so a huge file costs what is shown.
//
// It works a block at a time rather than a line at a time, and copies a
// block whole when all of it fits: in the guest every byte loop runs many
// times slower than natively, so the fewer passes over the data the better.
func (o Ops) Read(rel string, offset, limit, budget int) (ReadReply, error) {
	name, err := o.name(rel)
	if err != nil {
		return ReadReply{}, err
	}
	f, err := os.Open(name)
	if err != nil {
		return ReadReply{}, wrap(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ReadReply{}, wrap(err)
	}
	if st.IsDir() {
		return ReadReply{}, &Error{Kind: IsDir}
	}
	r := ReadReply{First: offset, Size: st.Size(), Stamp: stampOf(st)}
	bp := blocks.Get().(*[]byte)
	defer blocks.Put(bp)
	buf := *bp

	var (
		text      = make([]byte, 0, min(st.Size(), int64(budget)*utf8.UTFMax)+1)
		chars     int  // characters in text
		line      = 1  // the line the next byte belongs to
		partial   bool // line has bytes already
		lineAt    int  // where line starts in text
		charsAt   int  // chars before lineAt
		carry     int  // bytes of a split character kept for the next block
		readBytes int64
	)
	stop := func(last int, cut bool) (ReadReply, error) {
		r.Last, r.More, r.Cut = last, true, cut
		if bytes.IndexByte(text, 0) >= 0 {
			return ReadReply{}, &Error{Kind: Binary}
		}
		r.Text = unsafe.String(unsafe.SliceData(text), len(text)) // text is not used again
		return r, nil
	}
	for {
		n, rerr := f.Read(buf[carry:])
		if rerr != nil && rerr != io.EOF {
			return ReadReply{}, wrap(rerr)
		}
		n += carry
		if readBytes == 0 && bytes.IndexByte(buf[:min(n, 8000)], 0) >= 0 {
			return ReadReply{}, &Error{Kind: Binary}
		}
		readBytes += int64(n - carry)
		end := n
		if rerr == nil {
			end = n - splitTail(buf[:n])
		}
		block := buf[:end]
		tryWhole := true
		for len(block) > 0 {
			nl := bytes.IndexByte(block, '\n')
			if line < offset {
				if nl < 0 {
					partial = true
					break
				}
				block, line, partial = block[nl+1:], line+1, false
				continue
			}
			if limit > 0 && line >= offset+limit {
				return stop(line-1, false)
			}
			// Once a block, take all of it if it surely fits: no more bytes
			// than characters left (a character is at least a byte), and
			// no more lines. The check costs a pass over the block, too
			// much to repeat for every line or to make when it may fail.
			if tryWhole && len(block) <= budget-chars {
				tryWhole = false
				if k := bytes.Count(block, newline); limit == 0 || line+k < offset+limit {
					if c := utf8.RuneCount(block); chars+c <= budget {
						// All of the block fits: take it whole.
						text, chars = append(text, block...), chars+c
						if j := bytes.LastIndexByte(block, '\n'); j >= 0 {
							tail := block[j+1:]
							line += k
							lineAt, charsAt = len(text)-len(tail), chars-utf8.RuneCount(tail)
							partial = len(tail) > 0
						} else {
							partial = true
						}
						break
					}
				}
			}
			seg := block
			if nl >= 0 {
				seg = block[:nl+1]
			}
			c := utf8.RuneCount(seg)
			if chars+c > budget {
				if line == offset {
					text = append(text, cutRunes(seg, budget-chars)...)
					return stop(line, true)
				}
				text, chars = text[:lineAt], charsAt
				return stop(line-1, false)
			}
			text, chars = append(text, seg...), chars+c
			if nl < 0 {
				partial = true
				break
			}
			block, line, partial = block[nl+1:], line+1, false
			lineAt, charsAt = len(text), chars
		}
		carry = copy(buf, buf[end:n])
		if rerr == io.EOF || n == 0 {
			break
		}
	}
	r.Lines = line - 1
	if partial {
		r.Lines = line
	}
	r.Last = max(min(r.Lines, line), offset-1)
	if bytes.IndexByte(text, 0) >= 0 {
		return ReadReply{}, &Error{Kind: Binary}
	}
	r.Text = unsafe.String(unsafe.SliceData(text), len(text)) // text is not used again
	return r, nil
}

var newline = []byte{'\n'}

// blocks are reused: in the guest every allocation is paid for again by a
// garbage collector that runs on the caller's time.
var blocks = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// splitTail returns how many bytes at the end of b are the start of a
// character that continues past it.
func splitTail(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if !utf8.RuneStart(c) {
			continue
		}
		if !utf8.FullRune(b[len(b)-i:]) {
			return i
		}
		return 0
	}
	return 0
}

// cutRunes returns the first n characters of b.
func cutRunes(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}

// List returns the entries of the directory rel, sorted by name. A symlink
// counts as a directory when it leads to one inside the root.
func (o Ops) List(rel string) ([]Entry, error) {
	name, err := o.name(rel)
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(name)
	if err != nil {
		return nil, wrap(err)
	}
	entries := make([]Entry, len(des))
	for i, de := range des {
		dir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(path.Join(name, de.Name())); err == nil {
				dir = st.IsDir()
			}
		}
		entries[i] = Entry{Name: de.Name(), Dir: dir}
	}
	return entries, nil
}

// Edit replaces the one occurrence of req.Old in the file req.Rel with
// req.New, writing the result to a new file beside it (EditReply.Temp); the
// caller gives it its mode and renames it over EditReply.Target. With an
// empty Old and no such file, the file is created.
//
// Line endings and a UTF-8 byte order mark are the file's, not the model's:
// in a CRLF file, Old and New are matched and written with CRLF.
func (o Ops) Edit(req EditRequest) (EditReply, error) {
	target, err := o.resolveLinks(req.Rel)
	if err != nil {
		return EditReply{}, err
	}
	rep := EditReply{Target: target}
	name, _ := o.name(target)
	content, st, err := readAll(name)
	var body []byte
	switch {
	case kindOf(err) == NotExist:
		if req.Old != "" {
			return EditReply{}, &Error{Kind: NotExist}
		}
		rep.Created, rep.Count = true, 1
		body = []byte(req.New)
	case err != nil:
		return EditReply{}, err
	default:
		rep.Stamp = stampOf(st)
		if req.Expect != nil && *req.Expect != rep.Stamp {
			return EditReply{}, &Error{Kind: Changed}
		}
		if req.Old == "" {
			if len(content) > 0 {
				return EditReply{}, &Error{Kind: Exists}
			}
			rep.Count = 1
			body = []byte(req.New)
			break
		}
		bom := []byte(nil)
		if bytes.HasPrefix(content, utf8BOM) {
			bom, content = utf8BOM, content[len(utf8BOM):]
		}
		old, repl := []byte(req.Old), []byte(req.New)
		if isCRLF(content) {
			old, repl = toCRLF(old), toCRLF(repl)
		}
		var at int
		at, rep.Count = find(content, old)
		if rep.Count != 1 {
			return rep, nil
		}
		body = slices.Concat(bom, content[:at], repl, content[at+len(old):])
	}
	if req.DryRun {
		return rep, nil
	}
	if rep.Created {
		if err := os.MkdirAll(path.Dir(name), 0o777); err != nil {
			return EditReply{}, wrap(err)
		}
	}
	rep.Temp, err = o.writeTemp(target, body)
	return rep, err
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func readAll(name string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, wrap(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, wrap(err)
	}
	if st.IsDir() {
		return nil, nil, &Error{Kind: IsDir}
	}
	if st.Size() > MaxEditSize {
		return nil, nil, &Error{Kind: TooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxEditSize+1))
	if err != nil {
		return nil, nil, wrap(err)
	}
	if len(b) > MaxEditSize {
		return nil, nil, &Error{Kind: TooLarge}
	}
	return b, st, nil
}

// isCRLF reports whether the file's line endings are CRLF: all of them, or
// most of them in a file that mixes both.
func isCRLF(b []byte) bool {
	crlf := bytes.Count(b, []byte("\r\n"))
	return crlf > 0 && crlf*2 >= bytes.Count(b, []byte("\n"))
}

func toCRLF(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
}

// find returns where old first occurs in b and how often it occurs,
// counting overlapping occurrences: in "aaa", "aa" is ambiguous.
func find(b, old []byte) (first, count int) {
	first = bytes.Index(b, old)
	if first < 0 {
		return -1, 0
	}
	count = 1
	for i := first + 1; i <= len(b)-len(old); {
		j := bytes.Index(b[i:], old)
		if j < 0 {
			break
		}
		count++
		i += j + 1
	}
	return first, count
}

// resolveLinks follows symlinks at the end of rel, so that an edit replaces
// the file a link leads to rather than the link. Directories on the way are
// followed by the file system itself. A link that leads out is refused here,
// and would be refused by the os.Root below if it were not.
func (o Ops) resolveLinks(rel string) (string, error) {
	for range 40 {
		name, err := o.name(rel)
		if err != nil {
			return "", err
		}
		st, err := os.Lstat(name)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return rel, nil
		}
		dst, err := os.Readlink(name)
		if err != nil {
			return "", wrap(err)
		}
		if path.IsAbs(dst) {
			return "", &Error{Kind: Escapes}
		}
		rel = path.Join(path.Dir(rel), dst)
	}
	return "", &Error{Kind: Other, Msg: "too many levels of symbolic links"}
}

func (o Ops) writeTemp(target string, body []byte) (string, error) {
	// O_EXCL makes a name taken by someone else a retry, never a clobber.
	var f *os.File
	var temp, name string
	for try := 0; ; try++ {
		temp = path.Join(path.Dir(target), "."+path.Base(target)+".corral-"+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		name, _ = o.name(temp)
		var err error
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try == 10 {
			return "", wrap(err)
		}
	}
	var err error
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", wrap(err)
	}
	return temp, nil
}

// Rename moves from over to and returns the stamp of the result.
func (o Ops) Rename(from, to string) (Stamp, error) {
	src, err := o.name(from)
	if err != nil {
		return Stamp{}, err
	}
	dst, err := o.name(to)
	if err != nil {
		return Stamp{}, err
	}
	if err := os.Rename(src, dst); err != nil {
		os.Remove(src)
		return Stamp{}, wrap(err)
	}
	st, err := os.Stat(dst)
	if err != nil {
		return Stamp{}, wrap(err)
	}
	return stampOf(st), nil
}

// Remove removes the file rel.
func (o Ops) Remove(rel string) error {
	name, err := o.name(rel)
	if err != nil {
		return err
	}
	return wrap(os.Remove(name))
}

// Kind classifies a failure, so that the host can word it.
type Kind byte

const (
	Other      Kind = iota + 1
	NotExist        // no such file or directory
	IsDir           // a directory where a file was wanted
	NotDir          // a file where a directory was wanted
	Escapes         // the path, or a link on it, leads out of the root
	Binary          // the file holds a NUL byte
	Changed         // the file changed since its stamp was taken
	Special         // neither a regular file nor a directory
	Permission      // the host refused access
	TooLarge        // larger than MaxEditSize
	Exists          // not empty, so an empty Old cannot create it
)

// Error is a failure of a file operation.
type Error struct {
	Kind Kind
	Msg  string // for Other: what went wrong
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return [...]string{
		Other: "failed", NotExist: "no such file or directory", IsDir: "is a directory",
		NotDir: "not a directory", Escapes: "resolves outside the workspace root",
		Binary: "binary file", Changed: "changed on disk", Special: "not a regular file",
		Permission: "permission denied", TooLarge: "file too large", Exists: "file exists",
	}[e.Kind]
}

// wrap classifies err. In the guest, errno values are WASI's, and the
// os.Root-backed mount uses EPERM for an escape and nothing else.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT:
			return &Error{Kind: NotExist}
		case syscall.ENOTDIR:
			return &Error{Kind: NotDir}
		case syscall.EISDIR:
			return &Error{Kind: IsDir}
		case syscall.EPERM:
			return &Error{Kind: Escapes}
		case syscall.EACCES:
			return &Error{Kind: Permission}
		case syscall.ENOTSUP:
			return &Error{Kind: Special}
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Kind: NotExist}
	}
	return &Error{Kind: Other, Msg: errText(err)}
}

// errText is err's message without the guest's view of the path, which
// would only confuse: the host words its messages with the path as given.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
