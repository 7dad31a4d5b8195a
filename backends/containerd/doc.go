// Package containerd is the backend that runs cornus apps on containerd
// (the v2 Go client; containerd 1.6 and newer) with no daemon services
// beyond containerd's own: networking through backends/internal/cni (a
// bridge and a /24 per network, a pinned network namespace per container,
// portmap for published ports, hosts files and a DNS resolver on each
// gateway), supervision by backends/internal/monitor (a detached `cornus
// monitor` per container: logs, restart policy, healthchecks, exit codes,
// record.json), volumes as directories and labelled networks
// (backends/internal/localstore), the OCI spec from
// backends/internal/ocispec and Create's host side (mounts, files,
// network namespace) from backends/internal/prepare — shared with the
// bare backend.
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
// Features: images, pull, networks, connect, kill, pause, copy, top,
// rename, events, stats (no attach yet: the monitor holds stdio but has no
// stdin relay). Healthchecks and restart policies are run by the monitor,
// so the engine treats both as native. Gaps: egress (the caretaker), and
// the fields Docker-only runtimes carry (logging drivers: logs are the
// monitor's JSON lines).
//
// Errors: containerd's gRPC errors are translated by errdefs
// (NotFound, AlreadyExists → Conflict, Unavailable when the socket does
// not answer). It imports backends, spec and internal packages only.
package containerd
