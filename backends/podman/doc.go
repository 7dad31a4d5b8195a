// Package podman is the backend that runs cornus apps on a Podman service
// through its native libpod REST API (/v5.0.0/libpod/..., which podman
// 4.3 answers too), never the Docker-compatible endpoints. It speaks the
// API with a thin client of its own (client.go: JSON calls, raw streams,
// hijacked connections; wire.go: the libpod shapes it reads and sends):
// podman's Go bindings pull in most of podman and do not build next to
// containerd v2 (docs/podman.md).
//
// Entry points: New (WithEnviron) and the *Backend methods of
// backends.Backend plus its optional features (backends.FeaturesOf);
// Rootless and CheckHostReach for what depends on a rootless service;
// RunHealthDriver, the healthcheck driver process (DriverCommand).
// It imports backends, backends/internal/filecopy, spec and internal/svc
// only; never the engine or
// the CLI, and it never runs the podman CLI (service mode runs
// `podman system service`, the API server itself).
//
// # Endpoint
//
// Exactly one of: CORNUS_PODMAN_SOCKET (a socket path, unix://, tcp://;
// ssh:// answers NotImplemented with the OpenSSH command that forwards the
// socket instead) or CORNUS_PODMAN_SERVICE=1 (cornus starts `podman system
// service --time=0` on a socket of its own under the state directory,
// restarts it when it exits, stops it on Close; CONTAINERS_CONF and PATH
// come from the environment). Neither, or both, is an InvalidArgument
// naming both. There is no default and no probing: CONTAINER_HOST,
// DOCKER_HOST and the stock socket paths are ignored. An unreachable
// socket is no error for New: every call then fails Unavailable with
// "podman at X unreachable: …" until it answers. Whether the service is
// rootless is what GET /libpod/info says (host.security.rootless); that
// answer takes podman a quarter of a second and more, so it is kept in
// the state directory for the next command while the same socket file
// answers (a minute for TCP; infocache.go).
//
// # Capability matrix
//
// Features: images, pull, networks, connect, kill, restart, pause,
// attach, copy, top, rename, events, stats, host reach, rootless and
// remote mode (CORNUS_PODMAN_REMOTE=1: `cornus serve` gives each replica a
// caretaker companion, remote.go; no workloads, local mounts as host
// binds or dial). Restart policies are podman's; podman 4
// restarts at once and has no
// "restarting" state, so a container between runs that its policy
// restarts reads as restarting. Healthchecks are podman's
// (NativeHealthcheck): the config is podman's, with Docker's defaults
// filled in (podman's API applies none: a zero timeout would fail every
// probe) and the start interval, which podman 4 has no field for, in the
// label cornus.podman.health-start-interval; the health state inspect and
// events show is podman's too. Podman
// schedules the probes with systemd timers where its cgroup manager is
// systemd; elsewhere (no systemd, as on the test machines) cornus drives
// them (health.go, healthproc.go): Start and Restart spawn a detached
// `cornus podman-health ID` per running container with a healthcheck,
// found again by a flock'ed pid file under <CORNUS_DATA_DIR>/podman/health
// (never two), which calls GET /libpod/containers/{id}/healthcheck (podman
// runs the test once and records the result) on Docker's timings
// (interval, start_period with start_interval, timeout), and ends when the
// container is gone or exited; Stop and Remove end it. A driver outlives
// the cornus process and waits up to 10 minutes for a service that stops
// answering (30 s for a private CORNUS_PODMAN_SERVICE=1 service, which
// ends with its cornus process: its healthchecks run while that lives).
// A driver that was killed comes back with the next start or restart.
//
// Every field of the resolved ContainerSpec maps onto the SpecGenerator
// (specgen.go, golden-tested), some through what podman 4 offers instead:
// domainname as the kernel.domainname sysctl; a volume subpath as a bind
// of the volume's directory (podman 4 ignores SubPath); an anonymous
// volume with a driver or options as a volume made for the container and
// removed with it (label cornus.podman.anonymous-volumes); a host port
// range as its first free port, chosen on this host for a unix socket;
// createHostPath as a directory made here for a unix socket; a missing
// working directory created (create_working_dir, as Docker does); Docker
// security options as podman's fields (seccomp, apparmor, label,
// no-new-privileges, systempaths=unconfined as unmask ALL). When the spec
// sets ulimits, the service's default ulimits fill in the others (podman
// would otherwise put nproc and nofile at 1048576, beyond the host's hard
// limits); they are learned once from a container created and removed for
// the purpose. Declared gaps:
//
//	field                          reason
//	update                         replicas are replaced at once (backends.GapUpdate)
//	resources.reservations.cpus    podman has no CPU reservation
//	resources.reservations.pids    podman has no PID reservation
//	logging.options                only max-size (and a journald tag) exist
//	healthcheck.startInterval      where podman's systemd timers probe (cornus's driver honors it)
//	usernsMode                     rootless: always the user's namespace
//	deviceCgroupRules              rootless: no device nodes
//	domainname                     rootless: the sysctl is not writable
//	resources.limits               rootless on cgroup v1: no cgroup limits
//
// Egress policy works through the engine's caretaker companion.
//
// Differences from Docker that are no spec field: a non-TTY container's
// stdin closes when an attached client's stdin ends (podman has no
// StdinOnce=false); Attach ends shortly after its stdin ends, as docker
// attach does, except for a StdinOnce container (a label records it),
// whose output streams on to its end as with Docker; the list has no restart count (Inspect has it); log
// streams are always multiplexed; every exec session keeps a conmon
// process for the service's exit_command_delay after it ended (300 s by
// default, 10 s in scripts/podman.sh's containers.conf), even once the
// container is removed; podman's own healthcheck probes keep none.
// Podman 4's health_status events carry the status from before the probe
// and come once per probe: Events sends one per change, with the
// container's current status for live events. Events replays podman's
// log from Since and ends at Until, which podman 4.3 is never sent (its
// log reader stops on the wall clock at until: a past until answered one
// event or none); a past Until reads the log once. A rootless service on
// cgroup v1 has no stats and cannot pause: those answer NotImplemented.
//
// # Errors
//
// Podman's answers are classed with containerd/errdefs by status: 400
// InvalidArgument, 401/403 PermissionDenied, 404 NotFound, 409 Conflict
// (name in use), 501 NotImplemented, 503 Unavailable; its 500s by message
// where they are really states ("container state improper", "is being
// used", "no such", "network not found", "image not known"), else
// Internal. A failed connection is Unavailable naming the endpoint. Every
// error is wrapped with the operation and object ("create container
// shop-web-1: ..."); spec values podman cannot take are InvalidArgument
// naming the spec field. Buffered answers are bounded (64 MiB of JSON,
// 64 KiB of an error, 1 MiB per event or pull line); streams are copied
// frame by frame.
package podman
