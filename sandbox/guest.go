package sandbox

import (
	"context"
	"errors"
)

// Errors the guest reports, matched with errors.Is.
var (
	ErrEscapes  = errors.New("resolves outside the workspace root")
	ErrNotExist = errors.New("no such file or directory")
	ErrIsDir    = errors.New("is a directory")
	ErrNotDir   = errors.New("not a directory")
	ErrBinary   = errors.New("binary file")
	ErrChanged  = errors.New("changed on disk")
)

// A Stamp tells whether a file changed between two looks at it.
type Stamp struct {
	Size    int64
	ModTime int64 // nanoseconds
}

// Guest runs file operations inside the WASI guest.
type Guest struct {
	ws *Workspace
}

// ReadReply is what ReadFile read.
type ReadReply struct {
	Text      string // whole lines, from line First, at most the byte budget
	First     int    // 1-based number of the first line in Text
	Last      int    // number of the last line in Text, First-1 when none
	More      bool   // lines follow Last
	Size      int64  // the file's size in bytes
	Stamp     Stamp
	Truncated bool // Last was cut short by the byte budget
}

// Entry is one directory entry.
type Entry struct {
	Name string
	Dir  bool
}

// EditRequest asks the guest to replace Old with New in a file.
type EditRequest struct {
	Rel      string
	Old, New string
	Expect   *Stamp // refuse with ErrChanged unless the file still has this stamp
	DryRun   bool   // check only; write nothing
}

// EditReply is what an edit found or did.
type EditReply struct {
	Created bool  // the file did not exist and was created (or would be)
	Count   int   // occurrences of Old; the edit happens only when 1
	Stamp   Stamp // the file's stamp after the edit
}

func (g *Guest) ReadFile(ctx context.Context, rel string, offset, limit, budget int) (ReadReply, error) {
	panic("TODO")
}

func (g *Guest) ListDir(ctx context.Context, rel string) ([]Entry, error) {
	panic("TODO")
}

func (g *Guest) Edit(ctx context.Context, req EditRequest) (EditReply, error) {
	panic("TODO")
}

// NewGuest prepares the guest for ws. Compilation starts in the background,
// cached under cacheDir when it is not empty.
func NewGuest(ws *Workspace, cacheDir string) *Guest { return &Guest{ws: ws} }

// Close releases the guest.
func (g *Guest) Close() error { return nil }

// CacheDir returns where compiled guests are cached, or "" when the user has
// no cache directory.
func CacheDir() string { return "" }
