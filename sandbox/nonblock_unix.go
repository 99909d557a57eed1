//go:build unix

package sandbox

import "syscall"

// nonblockFlag keeps an open of a FIFO planted in the workspace from
// blocking forever; regular files ignore it.
const nonblockFlag = syscall.O_NONBLOCK
