// Package daemonless is the core the daemonless backends (containerd,
// bare) share: everything of a backend that does not depend on the
// runtime under it. A backend embeds *Core and supplies a Runtime — the
// runtime's containers and tasks (IDs, running, init pid, pids, pause and
// resume, kill of an orphan, delete, rename, exec) and a create's image
// and container (Build) — and keeps its images, its config and what is
// unique to it.
//
// What the Core owns: the records (container.json with the monitor
// record, backends/internal/records: List, Inspect, Attach, Events);
// networks and volumes (backends/internal/localstore over
// backends/internal/cni); Create's host side (backends/internal/prepare:
// mounts, files, the network namespace, shared pid and ipc namespaces)
// around the runtime's Build; the start/stop/kill/remove/wait/restart
// state machine through the per-container monitor
// (backends/internal/monitor), waiting for another start in flight and
// giving up with Unavailable on a monitor that died; pause, top, rename
// and copy (backends/internal/rootfs through /proc/<pid>/root);
// recovery of Creates that died half-way (backends/internal/halfmade);
// the monitor's DNS serving (Supervise); reading the settings every
// daemonless backend has (ReadConfig) and the image reference and
// registry helpers (Normalize, Familiar, Resolver).
//
// Entry points: ReadConfig, New, Core.Open, the Core's backend methods,
// Core.Supervise, Runtime and Build, ExecRequest.
//
// It imports backends, spec, internal/svc and backends/internal packages;
// never a backend, the engine or the CLI.
package daemonless
