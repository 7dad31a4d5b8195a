package incus

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/creack/pty"
)

// runOnTerminal runs an exec'd command on a terminal the helper opens
// itself, relaying its stdin and stdout to the terminal, and returns the
// command's exit code once it ended and its output is copied. Incus 6.0's
// own terminal (interactive exec) ends its operation only when the
// client's input ends, which a client holding stdin open (docker exec -it)
// never does; a plain exec ends with its process.
func runOnTerminal(path string, req helperRequest, env []string, stderr io.Writer) int {
	master, slave, err := pty.Open()
	if err != nil {
		fmt.Fprintf(stderr, "exec: allocate a terminal: %v\n", err)
		return exitHelperFailed
	}
	if req.Width > 0 && req.Height > 0 {
		_ = pty.Setsize(master, &pty.Winsize{Cols: uint16(req.Width), Rows: uint16(req.Height)})
	}
	attr := &syscall.ProcAttr{Env: env, Files: []uintptr{slave.Fd(), slave.Fd(), slave.Fd()},
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}}
	pid, err := syscall.ForkExec(path, req.Cmd, attr)
	slave.Close()
	if err != nil {
		master.Close()
		fmt.Fprintf(stderr, "exec %s: %v\n", req.Cmd[0], err)
		return exitNotRunnable
	}
	go func() { _, _ = io.Copy(master, os.Stdin) }()
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(os.Stdout, master); close(copied) }()
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	<-copied // the terminal reads EIO once no process holds its other end
	master.Close()
	return exitCode(ws)
}
