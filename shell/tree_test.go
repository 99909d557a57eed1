package shell

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// survivors lists the processes whose command line holds marker.
func survivors(marker string) []string {
	var found []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		if strings.HasSuffix(filepath.Dir(p), fmt.Sprint(os.Getpid())) {
			continue
		}
		found = append(found, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return found
}

// sleepArg returns a sleep duration unique to one test, so that its
// processes can be told from every other process on the machine.
func sleepArg() string {
	return fmt.Sprintf("%d.%08d", 30+rand.IntN(30), rand.IntN(1e8))
}

func TestProcessTreeDies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds survivors through /proc, which only Linux has")
	}
	need(t, "sleep", "bash", "setsid", "nohup")
	tests := []struct {
		name   string
		script string // %[1]s is the unique sleep argument
	}{
		{"background and foreground", "sleep %[1]s & sleep %[1]s"},
		{"inside bash", "bash -c 'sleep %[1]s & sleep %[1]s'"},
		{"setsid leaves the group", "setsid sleep %[1]s & sleep %[1]s"},
		{"ignores SIGTERM", `bash -c 'trap "" TERM INT HUP; sleep %[1]s & wait'`},
		{"nohup in the background", "nohup sleep %[1]s &"},
		{"double fork", "bash -c '(setsid sleep %[1]s &) ; sleep %[1]s'"},
		{"orphaned session leader with children", "setsid bash -c 'sleep %[1]s & sleep %[1]s' & sleep %[1]s"},
		{"interpreter loop", "while :; do :; done & sleep %[1]s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// In parallel, so that overlapping runs must also keep to
			// their own orphans.
			t.Parallel()
			arg := sleepArg()
			ws := workspace(t)
			start := time.Now()
			res := run(t, ws, fmt.Sprintf(tc.script, arg), time.Second)
			took := time.Since(start)
			if took > time.Second+5*time.Second {
				t.Errorf("returned after %v, want within the 1s timeout plus 5s", took)
			}
			// Killed processes may take a moment to be reaped by init when
			// they were not ours to reap; a zombie has no command line.
			var left []string
			for i := 0; i < 50; i++ {
				if left = survivors(arg); len(left) == 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Errorf("survivors after the run:\n%s\nresult:\n%s", strings.Join(left, "\n"), res.Text())
			}
			if strings.HasSuffix(tc.script, "&") {
				if res.TimedOut {
					t.Errorf("a script that ends by itself timed out:\n%s", res.Text())
				}
			} else if !res.TimedOut || res.ExitCode != ExitTimeout {
				t.Errorf("want a timeout with exit 124, got:\n%s", res.Text())
			}
		})
	}
}

// The interpreter's own loops stop at the deadline too.
func TestBuiltinLoopTimesOut(t *testing.T) {
	ws := workspace(t)
	start := time.Now()
	res := run(t, ws, "while :; do :; done", 500*time.Millisecond)
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if !res.TimedOut {
		t.Errorf("not timed out: %s", res.Text())
	}
}

// The sweep kills and reaps only what the runs started: a program that
// another part of corral started with os/exec keeps running, and its Wait
// still gets its exit status.
func TestSweepSparesOtherChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sweep exists only on Linux")
	}
	need(t, "sleep", "setsid", "bash")
	other := exec.Command("sleep", "2")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	arg := sleepArg()
	run(t, workspace(t), fmt.Sprintf("bash -c 'setsid sleep %[1]s &'; setsid sleep %[1]s & sleep 0.2", arg), 10*time.Second)
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the sweep killed a program it did not start: %v", err)
	}
	other.Process.Kill()
	if err := other.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Wait = %v, want the kill's exit status (not a stolen one)", err)
	}
	if left := survivors(arg); len(left) > 0 {
		t.Errorf("survivors: %v", left)
	}
}
