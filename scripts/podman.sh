#!/usr/bin/env bash
# podman.sh: make sure a Podman API service answers on cornus's private
# socket (CORNUS_PODMAN_SOCKET, default /run/cornus-podman/podman.sock): install
# podman and catatonit (and podman-compose, make bench's peer) if missing,
# write cornus's containers.conf, start
# `podman system service --time=0` once (detached, logging to a file) and wait
# until the libpod API answers. Idempotent; exits 0 when it already answers.
#
# These machines (Debian 12 VMs): cgroup v1 hybrid, so runc (crun refuses the
# layout); host limits nofile 20000 / nproc 32768, so the default ulimits stay
# within them (podman's default nofile 1048576 makes every container fail to
# start). No systemd: cgroupfs and a file events log. Networks are netavark's
# (with aardvark-dns: peers resolve each other by name and alias). An exec
# session's conmon stays 10 s after the process ends, not podman's 300 s.
# The volumes directory is a shared mount (remote mode's propagation).
set -euo pipefail
state=${CORNUS_PODMAN_STATE:-/run/cornus-podman}
sock=${CORNUS_PODMAN_SOCKET:-$state/podman.sock}
sock=${sock#unix://}
confdir=${CORNUS_PODMAN_CONFDIR:-/etc/cornus/podman}
conf=$confdir/containers.conf
log=${CORNUS_PODMAN_LOG:-/var/log/cornus-podman.log}
# alive: the process exists and is no zombie (a service that died as our
# child). Its state, not its command line: that reads empty for a moment
# while the starter execs setsid, nohup and podman.
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
ping() { [ -S "$sock" ] && curl -sf --max-time 3 --unix-socket "$sock" http://podman/v5.0.0/libpod/_ping >/dev/null 2>&1; }
up() { echo "podman.sh: podman $(podman version --format '{{.Server.Version}}' 2>/dev/null || podman --version) is up: CORNUS_PODMAN_SOCKET=unix://$sock (CONTAINERS_CONF $conf, log $log)"; }

# Volumes live on a shared mount, as dockerd makes /var/lib/docker one: a
# remote-mode caretaker mounts client-local mounts and credentials below
# its volume (bound rshared), which reach its app (bound rslave) only
# through the host's peer group. systemd hosts mount / shared; these have
# no systemd, and / is private.
vols=/var/lib/containers/storage/volumes
shared_volumes() {
	mkdir -p "$vols" "$state"
	(
		flock -w 60 8 # two starts at once bind it once
		awk -v d="$vols" '$5 == d && / shared:/ { found = 1 } END { exit !found }' /proc/self/mountinfo && exit 0
		mountpoint -q "$vols" || mount --bind "$vols" "$vols"
		mount --make-shared "$vols"
	) 8>"$state/volumes.lock"
}
shared_volumes
ping && command -v podman-compose >/dev/null 2>&1 && { up; exit 0; }

need=()
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] || need+=(catatonit)
command -v runc >/dev/null 2>&1 || need+=(runc)
command -v curl >/dev/null 2>&1 || need+=(curl)
# netavark and aardvark-dns are podman's recommended network stack (name
# resolution on user networks); install them explicitly so a
# --no-install-recommends default does not leave podman on CNI without DNS.
[ -x /usr/lib/podman/netavark ] || command -v netavark >/dev/null 2>&1 || need+=(netavark)
[ -x /usr/lib/podman/aardvark-dns ] || command -v aardvark-dns >/dev/null 2>&1 || need+=(aardvark-dns)
# podman-compose is make bench's peer on this service (hack/bench).
command -v podman-compose >/dev/null 2>&1 || need+=(podman-compose)
if [ ${#need[@]} -gt 0 ]; then
	echo "podman.sh: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

mkdir -p "$state" "$confdir"
chmod 0711 "$state"
# One starter at a time: a second caller waits here, then finds it running.
exec 9>"$state/start.lock"
flock -w 60 9 || { echo "podman.sh: $state/start.lock is held by another start for 60s" >&2; exit 1; }
ping && { up; exit 0; }

cgroup_manager=cgroupfs
events_logger=file
if [ -d /run/systemd/system ]; then
	cgroup_manager=systemd
	events_logger=journald
fi
pidfile=$state/podman.pid
if [ -f "$pidfile" ] && pid=$(cat "$pidfile") && [ -n "$pid" ] &&
	tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "system service"; then
	echo "podman.sh: the podman service (pid $pid) is already starting; waiting"
else
	cat >"$conf.new" <<EOF
# Written by scripts/podman.sh; rewritten on each start.
[containers]
# Within the host's hard limits (nofile 20000, nproc 32768).
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
# crun 1.8 refuses the cgroup v1 hybrid layout of these machines.
runtime = "runc"
cgroup_manager = "$cgroup_manager"
events_logger = "$events_logger"
# conmon of an API exec session lingers this long after the process ended
# (300 by default): with an exec per healthcheck probe they pile up.
exit_command_delay = 10
# podman's default, named: shared_volumes makes it a shared mount.
volume_path = "$vols"

[network]
network_backend = "netavark"
EOF
	mv "$conf.new" "$conf"
	rm -f "$sock"
	"$(dirname "$0")/netns.sh" # before any container has a network namespace
	echo "podman.sh: starting podman system service (CONTAINERS_CONF $conf, log $log)"
	(
		# Hold none of the caller's descriptors (the lock, make's or a CI
		# runner's pipes): a daemon keeping a pipe open hangs whoever reads it.
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		export CONTAINERS_CONF=$conf
		cd / # not the caller's directory: it may go (a CI clone), breaking getcwd in children
		exec setsid nohup podman system service --time=0 "unix://$sock" </dev/null >>"$log" 2>&1
	) &
	pid=$!
	echo "$pid" >"$pidfile"
fi
for _ in $(seq 1 120); do
	ping && { up; exit 0; }
	alive "$pid" || break
	sleep 0.25
done
status="still running (pid $pid)"
if ! alive "$pid"; then
	# Our child when this run started it: its exit status says why.
	rc=0
	wait "$pid" 2>/dev/null || rc=$?
	status="exited (status $rc)"
fi
echo "podman.sh: podman did not answer on $sock: $status; last log lines:" >&2
tail -n 20 "$log" >&2
exit 1
