// Package incus is the backend that runs cornus apps as Incus application
// containers, speaking the Incus REST API over incusd's unix socket with
// net/http and coder/websocket (never github.com/lxc/incus/v6).
//
// Two image paths, chosen by API extension (GET /1.0 → api_extensions):
//
//   - Incus 6.0 LTS (no instance_oci; Debian's, what CI proves): cornus
//     converts docker-archive and OCI-layout tars itself (convert.go:
//     layers flattened, whiteouts applied, the image config kept in an
//     image property) into a unified tarball, uploads it once (an image
//     Incus holds with the same image ID only gets aliases), and creates
//     instances whose init (raw.lxc lxc.init.cmd) is the cornus binary
//     itself, mounted read-only from <data dir>/incus/bin: `cornus monitor
//     incus NAME` prepares the container (cgroups, tmpfs, /dev/shm,
//     secrets and configs, hosts, resolv.conf, read-only root) and runs
//     the main process through the shared monitor (backends/internal/
//     monitor: logs, healthchecks, restart policy with on-failure:N,
//     exit codes, stdin for attach), confining it (capabilities,
//     no-new-privileges, user) through its exec helper. Exec and copy run
//     that helper through Incus's exec API. Addresses are static (the
//     NIC's ipv4.address plus lxc.net.N.ipv4.*): apps run no DHCP client.
//   - Incus >= 6.3 (instance_oci): incusd pulls the image from its
//     registry (source protocol oci); entrypoint+command → oci.entrypoint,
//     working dir → oci.cwd, a numeric user → oci.uid/gid; no cornus init,
//     so logs come from the console log (copied by cornus, because reads
//     drain it) and healthchecks from the engine's exec prober. ociGaps
//     lists what this path cannot honor, a command without an entrypoint
//     among them. Unit tests cover it against recorded answers (oci_test.go).
//
// Entry points: New (WithEnviron), the *Backend methods, and RunInit /
// RunHelper, the bodies of `cornus monitor incus|incus-helper` inside a
// container. Configuration: CORNUS_INCUS_SOCKET (/var/lib/incus/unix.socket),
// CORNUS_INCUS_PROJECT (default), CORNUS_INCUS_INSECURE_REGISTRIES (OCI
// path), CORNUS_INCUS_NETWORK (cornus, the bridge an app without networks
// joins), CORNUS_INCUS_SUBNET_BASE (10.77.0.0/16, project networks' /24s),
// CORNUS_DATA_DIR (/var/lib/cornus; this backend uses <dir>/incus),
// CORNUS_INCUS_INIT_BINARY (tests). Root is required. scripts/incus.sh
// installs and starts incusd.
//
// Instances are named cornus-<container name> (cornus-<project>-<app>-<n>);
// identity lives in user.cornus.* keys (managed, id, name, app, project,
// replica, labels, origin.image, ...). Container IDs are 64 random hex
// digits, new with each creation.
//
// # Capability matrix
//
// Features: images (load, inspect, list, remove; no pull on the 6.0
// path), networks, kill, restart, pause, attach, copy, top, rename,
// stats, events (events.go: the host journal merged with each
// container's monitor journal; the subscription is not confirmed, so
// the Docker API proxy's read cache stays off). Healthchecks and restart policies are native on the 6.0 path
// (the init's monitor), the engine's on the OCI path. Gaps (both paths):
// egress, logging drivers, reservations, deviceCgroupRules, and the
// host/container namespace modes LXC cannot share (network host,
// container: and service:, where none and bridge are honored; pid, ipc,
// uts, user, cgroup); the OCI path adds ociGaps. Security options: seccomp
// (unconfined or the default), no-new-privileges, and apparmor, label,
// systempaths, writable-cgroups (Incus's own confinement, unchanged); the
// rest (podman's mask and unmask, custom seccomp profiles) is
// NotImplemented.
//
// Service names resolve through each container's /etc/hosts and through
// DNS: the dnsmasq Incus runs on each cornus network reads a hosts
// directory cornus keeps (<incus dir>/cornus-dns/<bridge>, raw.dnsmasq
// hostsdir=). A published host port another process holds fails the
// start with "address already in use" (checked before Incus's proxy
// device, whose own error does not say so). Volume driver options, read
// as the host policy reads them (hostpolicy.LocalDriverMount), honor a
// host directory bind and a host block device (type=FS, device=/dev/...:
// an Incus disk device with that source); the rest, a tmpfs among them
// (never the device it names), is NotImplemented. The main
// process is not the container's pid 1 on the 6.0 path: the cornus init
// is (a hook reading /proc/1 sees cornus).
//
// LXC reads raw.lxc (written by lxcConfig alone) and the keys Incus maps
// into its configuration as lines: Create refuses spec text holding a line
// break, carriage return or NUL (checkSpecText) before it makes anything,
// and any such key or value in the instance body (checkBodyText), with an
// InvalidArgument error naming the field.
//
// Errors: Incus answers are classed by HTTP status and message (classify:
// 404 → NotFound, 409/"already exists" → Conflict, 400 → InvalidArgument,
// 403 → PermissionDenied, an unreachable socket → Unavailable naming
// scripts/incus.sh). incusd 6.0's bridge start/stop fails when a host
// interface vanishes while it walks them all; network create and delete
// retry that (retryVanished). It imports backends, spec, hostpolicy and
// internal packages only, never the CLI.
package incus
