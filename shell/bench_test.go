package shell

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// `echo hi` through the whole engine: parse, detection, interpreter, clamp.
func BenchmarkEchoEngine(b *testing.B) {
	ws := workspace(b)
	opts := Options{Workspace: ws, Timeout: time.Minute, Env: []string{"PATH=" + os.Getenv("PATH")}}
	for b.Loop() {
		if res := Run(context.Background(), opts, "echo hi"); res.Stdout != "hi\n" {
			b.Fatalf("got %q", res.Stdout)
		}
	}
}

func benchSpawn(b *testing.B, shell string) {
	path, err := exec.LookPath(shell)
	if err != nil {
		b.Skipf("needs %s, which this machine lacks", shell)
	}
	for b.Loop() {
		out, err := exec.Command(path, "-c", "echo hi").Output()
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("got %q, %v", out, err)
		}
	}
}

// The baselines: spawning a system shell for the same command.
func BenchmarkEchoBinSh(b *testing.B) { benchSpawn(b, "/bin/sh") }
func BenchmarkEchoBash(b *testing.B)  { benchSpawn(b, "bash") }

// Kill latency: from the deadline to the moment the last descendant is
// dead, for a tree with a background job, a nested shell and a setsid
// escapee. The tree's pids are collected before the deadline, and then
// polled one by one, since a scan of all of /proc takes milliseconds by
// itself. Reported as kill-ms.
func BenchmarkKillLatency(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("finds survivors through /proc, which only Linux has")
	}
	need(b, "sleep", "bash", "setsid")
	ws := workspace(b)
	const timeout = 300 * time.Millisecond
	var total time.Duration
	for b.Loop() {
		arg := sleepArg()
		script := fmt.Sprintf("sleep %[1]s & bash -c 'sleep %[1]s & sleep %[1]s' & setsid sleep %[1]s & sleep %[1]s", arg)
		pids := make(chan []string, 1)
		time.AfterFunc(timeout/2, func() { pids <- survivors(arg) })
		start := time.Now()
		res := run(b, ws, script, timeout)
		tree := <-pids
		if len(tree) < 5 {
			b.Fatalf("found %d of the 5 sleeps before the deadline", len(tree))
		}
		for _, p := range tree {
			pid, _, _ := strings.Cut(p, ":")
			for alive(pid) {
				time.Sleep(50 * time.Microsecond)
			}
		}
		total += time.Since(start) - timeout
		if !res.TimedOut {
			b.Fatalf("not timed out: %s", res.Text())
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "kill-ms")
}

// alive reports whether pid exists and is not a zombie.
func alive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// Memory while a command prints 1 GB: the peak heap growth, reported as
// heap-MiB.
func BenchmarkGigabyteMemory(b *testing.B) {
	need(b, "yes", "head")
	ws := workspace(b)
	var worst uint64
	for b.Loop() {
		var res Result
		growth := heapGrowth(func() {
			res = run(b, ws, "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 1000000000", 5*time.Minute)
		})
		if res.ExitCode != 0 {
			b.Fatalf("failed: %s", res.Text())
		}
		worst = max(worst, growth)
	}
	b.ReportMetric(float64(worst)/(1<<20), "heap-MiB")
}
