//go:build linux

package shell

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

var subreaper struct {
	once sync.Once
	ok   bool
}

// enableSubreaper makes corral a child subreaper, once for the process:
// descendants orphaned by a kill are then reparented to corral rather than
// to init, where the sweep can find them. It is process-wide, so orphans of
// programs started by other parts of corral are adopted too; the sweep
// leaves those alone (they share corral's process group).
//
// It also makes corral non-dumpable. Programs are not confined, and a
// program running as the same user could otherwise read corral's original
// environment, credentials included, from /proc/PPID/environ, or attach to
// it with ptrace; a non-dumpable process's /proc files belong to root.
func enableSubreaper() {
	subreaper.once.Do(func() {
		subreaper.ok = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	})
}

// sweepBound bounds the whole sweep; each round normally takes well under a
// millisecond.
const sweepBound = 2 * time.Second

// sweepOrphans kills and reaps the adopted children that belong to this run,
// round after round, since each one killed may hand its own children over.
//
// A blanket wait4(-1) would steal the exit statuses os/exec waits for, so
// orphans are found by pid and only those pids are reaped. An adopted child
// is this run's when it carries the run's tag; one without a readable tag
// (a zombie, or a program that cleared its environment) is swept when it is
// outside corral's own process group, which no program corral starts
// without a group of its own ever is. Another run's tagged orphans are left
// to that run.
func (t *tree) sweepOrphans() {
	if !subreaper.ok {
		return
	}
	self := os.Getpid()
	ownGroup := unix.Getpgrp()
	deadline := time.Now().Add(sweepBound)
	for time.Now().Before(deadline) {
		var mine []int
		procs.Lock()
		for _, pid := range childPIDs(self) {
			if _, ok := procs.started[pid]; ok {
				continue
			}
			pgid, err := unix.Getpgid(pid)
			if err != nil || pgid == ownGroup {
				continue
			}
			if tag := envTag(pid); tag != "" && tag != t.id && procs.active[tag] {
				continue
			}
			mine = append(mine, pid)
		}
		procs.Unlock()
		if len(mine) == 0 {
			return
		}
		for _, pid := range mine {
			// Its group may hold descendants that are not yet ours.
			if pgid, err := unix.Getpgid(pid); err == nil && pgid != ownGroup {
				_ = unix.Kill(-pgid, unix.SIGKILL)
			}
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range mine {
			reap(pid, deadline)
		}
	}
}

// reap waits for pid, which was sent SIGKILL, until deadline.
func reap(pid int, deadline time.Time) {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if got == pid || (err != nil && err != unix.EINTR) {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// childPIDs lists the children of process self, from the per-thread
// children files when the kernel has them, else from every process's stat.
func childPIDs(self int) []int {
	var pids []int
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	read := false
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		read = true
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	if read {
		return pids
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok && ppid == self {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentOf reads the parent pid from /proc/PID/stat, whose second field (the
// command name) may itself hold spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// envTag returns the run tag in pid's environment, or "".
func envTag(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	prefix := []byte(runTagVar + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			return string(kv[len(prefix):])
		}
	}
	return ""
}
