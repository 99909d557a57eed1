//go:build windows

package shell

import (
	"os/exec"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a Job Object holds every program of a run and all their
// descendants, which cannot leave it; terminating the job kills them all.
// Each program starts suspended and is resumed only once it is in the job,
// so that it cannot start a child outside the job first.
type platTree struct {
	// job is read by kills that race the start of a program, hence atomic.
	job atomic.Uintptr
}

var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

func enableSubreaper() {}

func (t *tree) sweepOrphans() {}

func (t *tree) prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP
}

func (t *tree) ensureJob() error {
	if t.plat.job.Load() != 0 {
		return nil
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return err
	}
	// If corral itself dies, closing its handle kills the job too.
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return err
	}
	t.plat.job.Store(uintptr(job))
	return nil
}

// adopt puts the suspended program in the run's job, then resumes it. It
// runs under t.mu.
func (t *tree) adopt(cmd *exec.Cmd) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|0x0800 /* PROCESS_SUSPEND_RESUME */, false, uint32(cmd.Process.Pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := t.ensureJob(); err != nil {
		windows.TerminateProcess(h, 1)
		return err
	}
	if err := windows.AssignProcessToJobObject(windows.Handle(t.plat.job.Load()), h); err != nil {
		windows.TerminateProcess(h, 1)
		return err
	}
	if r, _, _ := ntResumeProcess.Call(uintptr(h)); r != 0 {
		windows.TerminateProcess(h, 1)
		return syscall.Errno(r)
	}
	return nil
}

// killGroup terminates the whole job: a Windows program has no group of its
// own, and a run whose context ended is over anyway.
func (t *tree) killGroup(pid int) {
	t.terminate()
	if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid)); err == nil {
		windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	}
}

func (t *tree) terminate() {
	if job := windows.Handle(t.plat.job.Load()); job != 0 {
		windows.TerminateJobObject(job, 1)
	}
}

func (t *tree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if job := windows.Handle(t.plat.job.Swap(0)); job != 0 {
		windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
	}
}
