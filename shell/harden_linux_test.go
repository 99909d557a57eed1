//go:build linux

package shell

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A program must not read corral's own environment, where the credentials
// still are, through /proc.
func TestCorralEnvironUnreadable(t *testing.T) {
	need(t, "cat")
	ws := workspace(t)
	res := run(t, ws, fmt.Sprintf("cat /proc/%d/environ >/dev/null", os.Getpid()), 10*time.Second)
	dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil || dumpable != 0 {
		t.Errorf("corral is dumpable (%d, %v)", dumpable, err)
	}
	if os.Geteuid() == 0 {
		t.Skip("running as root, who may read any process's environment; checked only that corral is not dumpable")
	}
	if res.ExitCode == 0 || !strings.Contains(res.Text(), "Permission denied") {
		t.Errorf("a program read corral's environment:\n%s", res.Text())
	}
}
