// Package engine applies a spec.Project to a backends.Backend and tears it
// down: networks and volumes first, then services in dependency order
// (independent ones in parallel), waiting for depends_on conditions;
// replicas; idempotent re-apply keyed by a config hash; healthchecks run by
// the engine (through Exec) when the runtime has none; teardown in reverse
// order with each container's stop signal and grace period.
//
// Lifecycle hooks run in the devcontainer order: on a new container, once
// it has started, postCreate (onCreate, updateContent, postCreate) then
// postStart; on a restarted one postStart only; postAttach after those on
// every Up, for each replica, even one already running (the devcontainer
// CLI runs it on each `up`); preStop before the stop signal. A failing
// hook fails Up and leaves its container running, to be looked into. A
// container that was created but cannot start is removed again; one whose
// start fails with backends.ErrStaleTask (a runtime task kept across a
// daemon crash) is replaced. Applies and teardowns of one project are
// serialized across processes by a lock file (lock.go).
//
// Entry points are Engine methods (Up, Down, PS, Logs, Exec, Start, Stop,
// ...), each taking an XxxOptions struct. engine imports spec, backends,
// hostpolicy, progress and internal helpers (boundedfile, buildinfo,
// hostlock, statustext); it never imports the CLI or a specific backend.
package engine
