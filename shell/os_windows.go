//go:build windows

package shell

import "os/exec"

func isENOEXEC(error) bool { return false }

func signalOf(*exec.ExitError) (int, bool) { return 0, false }
