#!/usr/bin/env bash
# podman-rootless.sh: make sure a rootless Podman API service answers on
# /run/cornus-podman-rootless/podman.sock (CORNUS_PODMAN_ROOTLESS_SOCKET),
# for the remote-mode tests on a rootless podman: the system user
# cornus-rootless with subordinate IDs of its own, its containers.conf (as
# scripts/podman.sh writes root's: runc, cgroupfs, a file events log,
# ulimits within the host's), `podman system service --time=0` run as that
# user (detached, logging to a file). Root reaches the socket; the user's
# containers live in its user namespace, networked by slirp4netns and
# netavark in podman's rootless network namespace. Idempotent.
set -euo pipefail
user=cornus-rootless
home=/var/lib/$user
state=${CORNUS_PODMAN_ROOTLESS_STATE:-/run/cornus-podman-rootless}
sock=${CORNUS_PODMAN_ROOTLESS_SOCKET:-$state/podman.sock}
sock=${sock#unix://}
log=/var/log/cornus-podman-rootless.log
ping() { [ -S "$sock" ] && curl -sf --max-time 3 --unix-socket "$sock" http://podman/v5.0.0/libpod/_ping >/dev/null 2>&1; }
vols=$home/.local/share/containers/storage/volumes
# up shares the volumes directory in the user's mount namespace (podman's
# pause process holds it): a remote-mode companion mounts client-local
# mounts below its volume (bound rshared), which reach its app (bound
# rslave) only through that peer group; shared on the host, it would
# arrive in the user's namespace as a slave. Idempotent.
up() {
	runuser -u "$user" -- env HOME="$home" XDG_RUNTIME_DIR="/run/user/$(id -u "$user")" podman unshare sh -c \
		"mkdir -p '$vols' && { grep -q ' $vols $vols .* shared:' /proc/self/mountinfo || { mountpoint -q '$vols' || mount --bind '$vols' '$vols'; mount --make-shared '$vols'; }; }"
	echo "podman-rootless.sh: rootless podman is up: CORNUS_PODMAN_SOCKET=unix://$sock (user $user, volumes shared in its namespace, log $log)"
}
ping && { up; exit 0; }

"$(dirname "$0")/podman.sh" >/dev/null # podman, runc, netavark installed
for bin in slirp4netns newuidmap; do
	command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
if [ -n "${need[*]:-}" ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slirp4netns uidmap >/dev/null
fi
# slirp4netns opens /dev/net/tun as the user, and a companion's FUSE
# mounts /dev/fuse: both 0666, as udev makes them on a stock system (these
# VMs have them 0600).
[ -c /dev/net/tun ] || { mkdir -p /dev/net && mknod -m 0666 /dev/net/tun c 10 200; }
chmod 0666 /dev/net/tun /dev/fuse
id -u "$user" >/dev/null 2>&1 || useradd --system --create-home --home-dir "$home" --shell /usr/sbin/nologin "$user"
for f in /etc/subuid /etc/subgid; do
	grep -q "^$user:" "$f" 2>/dev/null || echo "$user:3000000:65536" >>"$f"
done
uid=$(id -u "$user")
# Where podman looks for it: its rootless network namespace binds it by
# that path (podman 4.3 fails elsewhere).
xdg=/run/user/$uid
mkdir -p "$state" "$xdg" "$home/.config/containers"
cat >"$home/.config/containers/containers.conf" <<EOF
# Written by scripts/podman-rootless.sh; rewritten on each start.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
exit_command_delay = 10

[network]
network_backend = "netavark"
EOF
chown -R "$user:" "$state" "$home" "$xdg"
chmod 0711 "$state"
chmod 0700 "$xdg"

exec 9>"$state/start.lock"
flock -w 60 9 || { echo "podman-rootless.sh: $state/start.lock is held by another start for 60s" >&2; exit 1; }
ping && { up; exit 0; }
rm -f "$sock"
# A rootless network namespace a dead service left (its netns file without
# its scaffolding) fails every start after ("failed to mount runtime
# directory for rootless netns"): nothing of the user's runs now.
pkill -u "$user" -f "rootless-netns|slirp4netns|aardvark-dns" 2>/dev/null || true
rm -rf "$xdg/netns" "$xdg/libpod/tmp/rootless-netns" "$xdg/libpod/tmp/rootless-netns.lock"
echo "podman-rootless.sh: starting rootless podman system service as $user (log $log)"
touch "$log"
chown "$user:" "$log"
(
	for fd in /proc/$BASHPID/fd/*; do
		fd=${fd##*/}
		[ "$fd" -gt 2 ] && eval "exec $fd>&-"
	done
	cd /
	exec setsid nohup runuser -u "$user" -- env HOME="$home" XDG_RUNTIME_DIR="$xdg" \
		podman system service --time=0 "unix://$sock" </dev/null >>"$log" 2>&1
) &
pid=$!
for _ in $(seq 1 120); do
	ping && { up; exit 0; }
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.25
done
echo "podman-rootless.sh: rootless podman did not answer on $sock; last log lines:" >&2
tail -n 20 "$log" >&2
exit 1
