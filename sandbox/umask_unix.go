//go:build unix

package sandbox

import "syscall"

// newFileMode is the mode of a file the tools create: what the user's umask
// makes of 0666, as for any program. Read once, at start-up, because reading
// the umask means setting it, and a file created in between would get 0666.
var newFileMode = func() uint32 {
	old := syscall.Umask(0)
	syscall.Umask(old)
	return 0o666 &^ uint32(old)
}()
