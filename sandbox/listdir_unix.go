//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// listHandle returns a handle for reading the directory dir, opened through
// an os.Root, that package os does not know came from one. For a directory
// opened in a Root, ReadDir stats every entry eagerly, because it cannot
// stat them lazily by path later; that tripled the cost of listing 1,000
// files. The copy shares dir's open file, so nothing is looked up by path
// again, and entries whose type the file system does not report are still
// stat'ed relative to the open directory, never by a path from the root.
// Only names and types may be taken from it: DirEntry.Info would stat by
// path.
func listHandle(dir *os.File) *os.File {
	fd, err := syscall.Dup(int(dir.Fd()))
	if err != nil {
		return dir
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), dir.Name())
}
