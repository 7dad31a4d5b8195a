package monitor

import (
	"context"
	"io"
	"syscall"
)

// Task is one container's runtime as the monitor drives it; the backend
// implements it (a containerd task, a runc container, a plain process in
// tests). The monitor calls it from one goroutine at a time, except Exec,
// which runs beside a live process.
type Task interface {
	// Start starts (or, after an exit, restarts) the main process with its
	// output wired to stdio and returns it once it runs.
	Start(ctx context.Context, stdio Stdio) (Process, error)
	// Exec runs cmd in the running container (healthchecks), writes its
	// combined output to out and returns its exit code. It must end the
	// command when ctx ends.
	Exec(ctx context.Context, cmd []string, out io.Writer) (int, error)
}

// Process is a started main process.
type Process interface {
	Pid() int
	// Signal sends sig to the process (to the whole container where the
	// runtime can: what a container's init receives).
	Signal(sig syscall.Signal) error
	// Wait blocks until the process has exited and its output has been
	// written to the Stdio writers. An error means the process was lost
	// track of (the record then says dead), not that it failed.
	Wait(ctx context.Context) (Exit, error)
}

// Stdio is where the main process's streams go. The writers never fail
// (a log that cannot be written drops output rather than blocking the
// container), and a partial line is kept until its newline or exit.
type Stdio struct {
	Stdin  io.Reader // nil: no stdin
	Stdout io.Writer
	Stderr io.Writer
}

// Exit is how a main process ended.
type Exit struct {
	// Code is the exit status, or 128+N when killed by signal N (Docker's
	// convention).
	Code      int
	OOMKilled bool
}
