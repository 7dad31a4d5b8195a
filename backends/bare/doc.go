// Package bare is the daemonless backend: cornus drives an OCI runtime CLI
// (runc by default) directly and supervises, with no dockerd and no
// containerd — cornus is its own Podman. Linux only; root required
// (rootless operation is refused with an "out of scope for now" error).
//
// It embeds the daemonless core (backends/internal/daemonless) shared
// with the containerd backend — records, networks, volumes, events,
// attach, Create's host side, the start/stop/remove state machine through
// the monitor, pause, top, rename, copy, half-made recovery — and
// supplies its Runtime over the OCI runtime's CLI (lifecycle.go, list.go,
// create.go, exec.go, runtime.go). What it is made of besides:
//   - images: an in-process store under <data>/bare/images (containerd's
//     content store and archive importer as libraries, no daemon): load
//     docker-archive and OCI-layout tars, pull from registries (loopback
//     over plain HTTP, CORNUS_BARE_INSECURE_REGISTRIES for more);
//     imagestore.go, images.go.
//   - root filesystems (snapshot.go): each layer unpacked once under
//     <data>/bare/layers with whiteouts converted for overlayfs, a
//     container's root an overlay mount of them under its own upper
//     directory; CORNUS_BARE_SNAPSHOTTER=native flattens an image into one
//     directory and copies it per container.
//   - the runtime bundle (spec.go): config.json generated from the
//     resolved spec with backends/internal/ocispec's options over
//     containerd's OCI defaults (process, env, user looked up in the
//     image, cwd, mounts, caps, devices,
//     sysctls, rlimits within the host's hard limits, cgroup resources,
//     readOnly, tmpfs, shm, hostname; never a negative oomScoreAdj),
//     cgroups under /cornus-bare/<id>.
//   - supervision (monitor.go): the per-container monitor of
//     backends/internal/monitor (`cornus monitor bare ID`, detached) is a
//     child subreaper and the parent of `runc create`/`runc start`, so the
//     container's init becomes its child and it waits for it through a
//     pidfd; it owns stdio (FIFOs in the bundle that the container holds
//     read-write, or the terminal runc passes over a console socket),
//     logs, healthchecks, the restart policy with capped exponential
//     backoff, exit codes and record.json. It reaps the orphans runc
//     leaves it (reaper.go): unreaped, they pin the container's PID
//     namespace and a stop never ends.
//   - exec (exec.go): `runc exec` in the foreground (TTY through a
//     terminal of ours, resized by SIGWINCH), killed with its context.
//   - networking: the core's backends/internal/cni (a bridge and a /24
//     per network, pinned network namespaces, portmap, hosts files) and a
//     DNS resolver on each gateway served by the monitors
//     (CORNUS_BARE_DNS=false turns it off).
//   - reconcile (reconcile.go, ready.go, adopt.go): every cornus command
//     that opens the backend looks for containers that should run and
//     have no monitor. One still running (its monitor was killed) is
//     adopted by a new monitor: its output FIFOs read again, its init
//     watched through a pidfd (its exit status is unknown: 255, or
//     128+the signal a stop sent). One the runtime lost (a host reboot) is
//     restarted when its policy says so — its overlay root mounted again,
//     its namespace rebuilt and re-attached from container.json — or
//     recorded as exited.
//
// Entry points: New (WithEnviron), the *Backend methods, RunMonitor (the
// monitor subcommand's body). Configuration: CORNUS_BARE_RUNTIME (runc;
// crun, youki or runsc by name or path, checked at startup — crun on this
// kind of host's cgroup v1 hybrid layout is refused with that reason),
// CORNUS_BARE_SNAPSHOTTER (overlayfs|native), CORNUS_BARE_DNS,
// CORNUS_BARE_STATS_SOURCE (cgroups, or runtime: `events --stats`, the
// default with runsc),
// CORNUS_BARE_LOG_MAX_BYTES, CORNUS_BARE_INSECURE_REGISTRIES,
// CORNUS_DATA_DIR (/var/lib/cornus; this backend uses <dir>/bare),
// CORNUS_STATE_DIR (the runtime's state under <dir>/bare/runtime), and
// for CNI CORNUS_CNI_BIN_DIR / CNI_PATH / CORNUS_CNI_SUBNET_BASE.
//
// # Capability matrix
//
// Features: images, pull, networks, connect, kill, restart, pause, attach,
// copy (through /proc/<pid>/root, resolved inside the root), top, rename,
// events, stats (cgroup v1 or v2 files, or the runtime's events).
// Healthchecks and restart policies are run by the monitor, so the engine
// treats both as native. Egress policy works through the engine's
// caretaker companion (it owns each replica's network namespace; binds
// with shared propagation make their source a shared mount,
// backends/internal/ocispec). Create's host side (mounts, files, the
// network namespace) is backends/internal/prepare and volumes and
// networks are backends/internal/localstore, shared with the containerd
// backend. Client-local mounts of a `cornus serve` session are
// host binds (CheckLocalMounts), as on dockerhost. Gaps: logging drivers
// (logs are the monitor's JSON lines) and update (replicas are replaced
// at once). A privileged exec gets what a
// privileged container does (ocispec.PrivilegedExec). Not done yet:
// runsc's copy path (tar inside the sandbox), adopting
// a TTY container (its terminal dies with its monitor: it is restarted).
//
// Errors: the runtime's failures carry its logged message; "does not
// exist" maps to NotFound, "not running" to Conflict. Image names not in
// the store are NotFound with how to load them. It imports backends, spec,
// internal/svc and backends/internal packages only, never the engine or
// the CLI.
package bare
