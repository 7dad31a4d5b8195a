// Package containerd is the backend that runs cornus apps on containerd
// (the v2 Go client; containerd 1.6 and newer) with no daemon services
// beyond containerd's own. It embeds the daemonless core
// (backends/internal/daemonless) shared with the bare backend: records,
// networking through backends/internal/cni (a bridge and a /24 per
// network, a pinned network namespace per container, portmap for
// published ports, hosts files and a DNS resolver on each gateway),
// supervision by backends/internal/monitor (a detached `cornus monitor`
// per container: logs, restart policy, healthchecks, exit codes,
// record.json), volumes and networks (backends/internal/localstore),
// Create's host side (backends/internal/prepare) and the lifecycle. What
// is containerd's stays here: the core's Runtime over containerd's
// containers and tasks (lifecycle.go, list.go, create.go with the
// snapshot's volume seeding, exec.go), the task a monitor drives
// (monitor.go), images (images.go), stats from the task's metrics
// (stats.go) and the config (config.go).
//
// Entry points: New (WithEnviron) and the *Backend methods. Configuration:
// CORNUS_CONTAINERD_ADDRESS (else CONTAINERD_ADDRESS, else
// /run/containerd/containerd.sock), CORNUS_CONTAINERD_NAMESPACE (cornus),
// CORNUS_CONTAINERD_SNAPSHOTTER (overlayfs), CORNUS_DATA_DIR
// (/var/lib/cornus; this backend uses <dir>/containerd),
// CORNUS_CONTAINERD_LOG_MAX_BYTES (16 MiB), CORNUS_CONTAINERD_INSECURE_REGISTRIES,
// and for CNI CORNUS_CNI_BIN_DIR / CNI_PATH / CORNUS_CNI_SUBNET_BASE.
// Root is required.
//
// # Capability matrix
//
// Features: images, pull, networks, connect, kill, restart, pause, attach
// (output and stdin through the container's monitor,
// backends/internal/records), copy, top, rename, events, stats, remote
// mode.
// Healthchecks and restart policies are run by the monitor, so the engine
// treats both as native. Egress policy works through the engine's
// caretaker companion; client-local mounts of a `cornus serve` session
// need the server's remote mode (CORNUS_CONTAINERD_REMOTE=1), where the
// companion mounts them. Gaps: logging drivers (logs are the monitor's
// JSON lines) and update (a changed app's replicas are replaced at once).
//
// Errors: containerd's gRPC errors are translated by errdefs
// (NotFound, AlreadyExists → Conflict, Unavailable when the socket does
// not answer). It imports backends, spec and internal packages only.
package containerd
