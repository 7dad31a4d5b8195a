package procattr

import (
	"os"
	"syscall"
)

// Daemon is the SysProcAttr of a daemon cornus starts and owns: a
// process group of its own (CREATE_NEW_PROCESS_GROUP).
func Daemon() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// KillGroup kills the daemon (its children are its own to end).
func KillGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// Terminate stops a daemon: Windows has no SIGTERM to ask with.
func Terminate(p *os.Process) error { return p.Kill() }

// Session is the SysProcAttr of a process that outlives the command
// that starts it: no console, a process group of its own.
func Session() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | 0x00000008} // DETACHED_PROCESS
}
