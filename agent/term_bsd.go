//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package agent

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
