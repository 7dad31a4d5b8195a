// Package monitor is the per-container monitor the daemonless backends
// share (containerd and bare detach one per container; incus's init runs
// the same supervision inside the container): the cornus binary itself,
// detached like podman's conmon, supervising one container's main process
// after the CLI that started it has exited. It owns what a daemon would:
// stdout/stderr into rotated JSON-lines logs, healthchecks, the restart
// policy with Docker's backoff, exit codes and times, and a record.json
// that a later cornus reads with no daemon to ask.
//
// The runtime-specific part is [Task] (start the main process, exec a
// probe) and [Process] (pid, signal, wait), which the backend implements.
//
// Entry points:
//   - [Store]: record.json per container under <records>/<id>/, written
//     atomically (Read, Write, List, Remove).
//   - [Spawn] (CLI side): write a fresh record, start the monitor detached
//     (`exe args...`, normally a hidden `cornus monitor` subcommand), and
//     return once it reports the process started or why it did not.
//   - [Run] (monitor side): the supervision loop that subcommand calls,
//     with a Task from its backend and a ctx ended by SIGTERM.
//   - Client helpers on a record directory: [Stop], [Kill], [Status]
//     through the control socket; [Logs] reading both log generations
//     and following; [Wait] for the final record; [Alive] for a record's
//     monitor.
//
// A record directory holds record.json, container.log (+ .1, the one old
// generation), monitor.sock (0600, in a 0700 directory; protocol in
// control.go) and monitor.log (the monitor's own stderr). A record is
// final (exited or dead) once no monitor will touch it again; the monitor
// writes it last, after the last log line and after removing its socket.
//
// Of cornus's packages it imports only backends/internal/journal (the
// events it writes), besides containerd/errdefs: no backend package,
// nothing of the engine or the CLI. It is made for Linux
// (/proc start times, inotify, /proc/self/fd socket paths); other Unix
// systems build it with polling and without pid-reuse detection.
package monitor
