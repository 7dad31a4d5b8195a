// Package dockerhost is the backend that runs cornus apps on a Docker
// Engine through its HTTP API (github.com/moby/moby/client), negotiating
// the API version down to what the daemon speaks (dockerd 20.10 = 1.41).
//
// Entry points: New (WithHost, WithEnviron: DOCKER_HOST, else
// CORNUS_DOCKER_SOCK as a path or unix:// URL, else
// /var/run/docker.sock) and the *Backend methods of backends.Backend plus
// its optional features (backends.FeaturesOf: all but workloads, host
// reach, dial and rootless; local mounts as host binds and remote mode,
// CORNUS_DOCKER_REMOTE=1, remote.go). Create bodies come from
// createbody.FromSpec. It imports backends, backends/internal/filecopy,
// dockerapi/createbody, spec and internal/{hostlock,statustext} only; never the
// engine or the CLI, and it never shells out to the docker CLI.
//
// # Capability matrix
//
// Honored natively: healthchecks (Docker runs them) and restart policies.
// Every spec.App field maps onto the create request (see dockerapi/createbody)
// except:
//
//	field                          API   reason
//	update                         all   replicas are replaced at once (backends.GapUpdate)
//	resources.reservations.cpus    all   Docker has no CPU reservation
//	resources.reservations.pids    all   Docker has no PID reservation
//	healthcheck.startInterval      <1.44 HealthConfig.StartInterval is newer
//	volumes.subpath                <1.45 VolumeOptions.Subpath is newer
//
// Version workarounds rather than gaps, at API 1.41:
//   - one network endpoint at create: the first network goes in the
//     create body, the others are connected before Create returns;
//   - mounts with createHostPath use legacy Binds ("src:dst:ro,rslave"),
//     since BindOptions.CreateMountpoint needs 1.42;
//   - StopOptions.Signal: stop/restart ignore signal= before 1.42, so a
//     signal other than the container's own is sent by kill, followed by
//     a stop with the rest of the grace period;
//   - exec TTY size: set by a resize once the exec runs (ConsoleSize on
//     exec create/start needs 1.42);
//   - health, exit code and start/finish times in List: read back from the
//     status text ("Up 3 seconds (healthy)"), the summary has no times and
//     its Health field is newer;
//   - network names: the daemon does not check duplicates for this
//     client (no CheckDuplicate) and never atomically, so EnsureNetwork
//     creates under a host lock per daemon (internal/hostlock: every
//     cornus process of the user), looks networks up by labels, and after
//     creating one re-lists and keeps the oldest of concurrent twins made
//     by others (removing its own otherwise).
//
// Events confirms a subscription (EventOptions.Subscribed) once dockerd
// answered GET /events — seen by a client response hook, since the moby
// client returns before a failure is reported — and replays from the call's
// time, because dockerd sends its headers just before it subscribes.
//
// Secrets and configs (ContainerSpec.Files) are copied into the created
// container before it starts, as one in-memory tar with their owners and
// modes; with readOnly: true Docker refuses the copy (the rootfs is
// read-only even before start) unless the target is on a volume.
//
// # Errors
//
// The moby client classes daemon answers with containerd/errdefs by HTTP
// status: 400 InvalidArgument, 403 PermissionDenied, 404 NotFound (no such
// container, image, network, volume or path), 409 Conflict (name in use,
// container not running, volume in use), 501 NotImplemented, 503
// Unavailable, 500 Internal. Every error is wrapped with the operation and
// object ("create container shop-web-1: ..."). A failed connection is
// unclassed in the client and becomes Unavailable here; New's error says
// how to start dockerd. Start's "task ID: already exists" (a 500: dockerd
// was killed between creating and starting the task, containerd kept it)
// becomes backends.ErrStaleTask, a Conflict the engine answers by
// replacing the container. Spec values Docker cannot take (bad restart
// policy, IP, port, propagation, platform, or an unrewritten service:NAME
// mode) are InvalidArgument naming the spec field.
package dockerhost
