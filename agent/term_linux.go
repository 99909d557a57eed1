package agent

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TCGETS
