//go:build windows

package shell

import (
	"os/exec"
	"syscall"
)

func isENOEXEC(error) bool { return false }

func signalOf(*exec.ExitError) (int, bool) { return 0, false }

// cmdExeLine sets the command line of a cmd.exe fallback by hand: os/exec
// quotes arguments for programs that parse them like the C runtime, which
// cmd.exe does not. /s /c "..." makes cmd.exe take what is between the
// outer quotes verbatim, and /d skips AutoRun commands.
func cmdExeLine(cmd *exec.Cmd, path, script string) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CmdLine = `"` + path + `" /d /s /c "` + script + `"`
}
