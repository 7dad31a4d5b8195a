package procattr

import (
	"os"
	"syscall"
)

// Daemon is the SysProcAttr of a daemon cornus starts and owns.
func Daemon() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// KillGroup kills the process group a Daemon leads.
func KillGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// Terminate asks a daemon to stop (SIGTERM).
func Terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// Session is the SysProcAttr of a process that outlives the command
// that starts it: a session of its own, away from the terminal.
func Session() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
