#!/usr/bin/env bash
# containerd.sh: make sure cornus's private containerd answers on
# CORNUS_CONTAINERD_ADDRESS (default /run/cornus-containerd/containerd.sock):
# install containerd, runc and the CNI plugins if missing, write its own
# config, start it once and wait for it. Idempotent; exits 0 when it already
# answers.
#
# It shares nothing with dockerd's containerd (/var/run/docker/containerd) or
# a system one (/run/containerd, /var/lib/containerd, /etc/containerd): own
# root, state, gRPC/ttrpc/debug sockets, config and log. The CRI plugin is off
# (cornus speaks the containerd API). What containerd 1.6 does not let a
# config move: shim sockets live in /run/containerd/s for every instance (named
# by a hash of the daemon socket, namespace and id, so they never collide);
# runc state defaults to /run/containerd/runc/<namespace> and client FIFOs to
# /run/containerd/fifo, so clients pass runc options Root=$state/runc and
# cio.WithFIFODir($state/fifo).
#
# These machines (Debian 12 VMs): cgroup v1 hybrid, so runc (crun refuses the
# layout) with cgroupfs paths; no CAP_SYS_RESOURCE, so containerd keeps its
# inherited oom_score (oom_score = 0 means "leave it") and clients must never
# ask for a negative oomScoreAdj.
set -euo pipefail
state=${CORNUS_CONTAINERD_STATE:-/run/cornus-containerd}
root=${CORNUS_CONTAINERD_ROOT:-/var/lib/cornus-containerd}
sock=${CORNUS_CONTAINERD_ADDRESS:-$state/containerd.sock}
sock=${sock#unix://}
log=${CORNUS_CONTAINERD_LOG:-/var/log/cornus-containerd.log}
config=$state/config.toml
# alive: a zombie (a containerd that died as our child) has an empty cmdline.
alive() { [ -n "$(tr -d '\0' 2>/dev/null <"/proc/$1/cmdline")" ]; }
ping() { [ -S "$sock" ] && timeout 3 ctr --address "$sock" version >/dev/null 2>&1; }
up() { echo "containerd.sh: containerd $(ctr --address "$sock" version 2>/dev/null | awk '/Version:/{v=$2} END{print v}') is up: CORNUS_CONTAINERD_ADDRESS=unix://$sock (root $root, state $state, log $log)"; }

ping && { up; exit 0; }

need=()
command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 || need+=(containerd)
command -v containerd-shim-runc-v2 >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/portmap ] || need+=(containernetworking-plugins)
if [ ${#need[@]} -gt 0 ]; then
	echo "containerd.sh: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

mkdir -p "$state" "$root"
chmod 0711 "$state" "$root"
# One starter at a time: a second caller waits here, then finds it running.
exec 9>"$state/start.lock"
flock -w 60 9 || { echo "containerd.sh: $state/start.lock is held by another start for 60s" >&2; exit 1; }
ping && { up; exit 0; }

# A containerd of ours that is still starting (or hung): don't start a second.
pidfile=$state/containerd.pid
if [ -f "$pidfile" ] && pid=$(cat "$pidfile") && [ -n "$pid" ] &&
	tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "--config $config"; then
	echo "containerd.sh: containerd (pid $pid) is already starting; waiting"
else
	cat >"$config" <<EOF
# Written by scripts/containerd.sh; rewritten on each start.
version = 2
root = "$root"
state = "$state"
# 0 leaves containerd's inherited oom_score_adj alone (no CAP_SYS_RESOURCE here).
oom_score = 0
# No CRI (cornus uses the containerd API), no /opt/containerd, no snapshotters
# this machine does not use (overlayfs is the one). Keep
# io.containerd.runtime.v1.linux: 1.6's tasks service fails to load without it.
disabled_plugins = [
  "io.containerd.grpc.v1.cri",
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
]
required_plugins = [
  "io.containerd.snapshotter.v1.overlayfs",
  "io.containerd.runtime.v2.task",
  "io.containerd.grpc.v1.tasks",
]

[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$state/debug.sock"
  level = "info"
[metrics]
  address = ""

[plugins."io.containerd.runtime.v1.linux"]
  # unused (cornus uses io.containerd.runc.v2), but keep it off /run/containerd/runc
  runtime_root = "$state/runc-v1"
EOF
	echo "containerd.sh: starting containerd (config $config, log $log)"
	(
		# Hold none of the caller's descriptors (the lock, make's or a CI
		# runner's pipes): a daemon keeping a pipe open hangs whoever reads it.
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		cd / # not the caller's directory: it may go (a CI clone), breaking getcwd in children
		exec setsid containerd --config "$config" </dev/null >>"$log" 2>&1
	) &
	pid=$!
	echo "$pid" >"$pidfile"
fi
for _ in $(seq 1 120); do
	ping && { up; exit 0; }
	alive "$pid" || break
	sleep 0.25
done
echo "containerd.sh: containerd did not answer on $sock; last log lines:" >&2
tail -n 20 "$log" >&2
exit 1
