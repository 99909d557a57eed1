//go:build !unix

package main

import "os"

// Windows cannot send Ctrl-C to one child process from a test.
const canInterrupt = false

func interrupt(p *os.Process) {}
