// Package engine applies a spec.Project to a backends.Backend and tears it
// down: networks and volumes first, then services in dependency order
// (independent ones in parallel), waiting for depends_on conditions;
// replicas; idempotent re-apply keyed by a config hash; healthchecks run by
// the engine (through Exec) when the runtime has none; teardown in reverse
// order with each container's stop signal and grace period.
//
// Entry points are Engine methods (Up, Down, PS, Logs, Exec, Start, Stop,
// ...), each taking an XxxOptions struct. engine imports spec, backends
// and progress; it never imports the CLI or a specific backend.
package engine
