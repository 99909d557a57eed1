//go:build unix

package main

import (
	"os"
	"syscall"
)

const canInterrupt = true

func interrupt(p *os.Process) { p.Signal(syscall.SIGINT) }
