package shell

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// pipeGrace bounds how long a finished program's output pipes are drained
// while a stray descendant still holds them open (`daemon &` inside a
// program): after it, the pipes are closed and the run goes on.
const pipeGrace = 250 * time.Millisecond

// runTagVar is set in the environment of every program a run starts. Most
// descendants inherit it, even through setsid and double forks, which lets
// the orphan sweep tell whose orphan it has adopted when runs overlap.
const runTagVar = "CORRAL_SHELL_RUN"

// procs records every program the engine started and has not yet reaped,
// and the runs in progress. The orphan sweep must never touch a started
// program (os/exec owns its exit status), and it holds the lock while it
// looks, so that a program forked but not yet recorded is never taken for
// an orphan.
var procs = struct {
	sync.Mutex
	started map[int]string // pid -> run id
	active  map[string]bool
}{started: map[int]string{}, active: map[string]bool{}}

var lastRunID atomic.Uint64

var errRunOver = errors.New("the run is over")

// A tree is the set of processes one run started, and the means to kill
// them all.
type tree struct {
	id     string
	mu     sync.Mutex
	groups []int // process group ids, one per started program
	closed bool
	plat   platTree
}

func newTree() *tree {
	t := &tree{id: strconv.FormatUint(lastRunID.Add(1), 10)}
	procs.Lock()
	procs.active[t.id] = true
	procs.Unlock()
	return t
}

// start starts cmd in a group of its own and records it. A run that is
// over starts nothing more, so that a background job racing the end of the
// run cannot leave a program behind.
func (t *tree) start(cmd *exec.Cmd) error {
	t.prepare(cmd)
	cmd.Env = append(cmd.Env, runTagVar+"="+t.id)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errRunOver
	}
	procs.Lock()
	err := cmd.Start()
	if err == nil {
		procs.started[cmd.Process.Pid] = t.id
	}
	procs.Unlock()
	if err != nil {
		return err
	}
	t.groups = append(t.groups, cmd.Process.Pid)
	if err := t.adopt(cmd); err != nil {
		t.killGroup(cmd.Process.Pid)
		_ = cmd.Wait()
		t.forget(cmd.Process.Pid)
		return err
	}
	return nil
}

func (t *tree) forget(pid int) {
	procs.Lock()
	delete(procs.started, pid)
	procs.Unlock()
}

// run starts cmd and waits for it; when ctx ends first, cmd's whole group is
// killed at once. No grace period: the command has had its time, and a
// bounded kill latency is worth more than a tidy exit.
func (t *tree) run(ctx context.Context, cmd *exec.Cmd) error {
	cmd.WaitDelay = pipeGrace
	if err := t.start(cmd); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	stop := context.AfterFunc(ctx, func() { t.killGroup(pid) })
	err := cmd.Wait()
	stop()
	t.forget(pid)
	return err
}

// kill ends the run: it kills every group the run started, then the
// descendants that left their group, and starts nothing more. It is called
// at the end of every run, not only on timeout, because a script's
// background jobs and their children must not outlive it.
//
// Killing a group whose members are all gone could in principle hit a new
// group that reused the id; that needs the pid space to wrap around within
// one run, which is accepted.
func (t *tree) kill() {
	t.mu.Lock()
	t.closed = true
	groups := t.groups
	t.mu.Unlock()
	for _, g := range groups {
		t.killGroup(g)
	}
	// A run that started no program has no orphans, and the sweep reads
	// /proc, which is most of the cost of a run like `echo hi`.
	if len(groups) > 0 {
		t.sweepOrphans()
	}
	t.release()
	procs.Lock()
	delete(procs.active, t.id)
	procs.Unlock()
}
