//go:build unix

package shell

import (
	"errors"
	"os/exec"
	"syscall"
)

func isENOEXEC(err error) bool { return errors.Is(err, syscall.ENOEXEC) }

func signalOf(ee *exec.ExitError) (int, bool) {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}

func cmdExeLine(*exec.Cmd, string, string) {}
