//go:build unix

package shell

import (
	"os/exec"
	"syscall"
)

type platTree struct{}

func (t *tree) prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	enableSubreaper()
}

func (t *tree) adopt(*exec.Cmd) error { return nil }

// killGroup sends SIGKILL to the group led by pid; SIGTERM could be ignored.
func (t *tree) killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

func (t *tree) release() {}
