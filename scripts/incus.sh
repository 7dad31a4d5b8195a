#!/usr/bin/env bash
# incus.sh: make sure an Incus daemon answers on CORNUS_INCUS_SOCKET (default
# /var/lib/incus/unix.socket) with what cornus's incus backend needs: add
# Debian bookworm-backports and install incus from it if missing, start
# incusd once (detached, logging to a file), create the `cornus` bridge
# network with an explicit subnet (incusd's own subnet detection fails on
# these machines) and a `dir` storage pool, and point the default profile's
# root disk at that pool. Idempotent; exits 0 at once when all is in place.
#
# Subnets: the cornus network is 10.77.0.0/24 and project networks get /24s
# from 10.77.0.0/16 (the backend allocates them), away from cornus CNI
# (10.4.0.0/16), docker's and podman's pools (172.16.0.0/12, 192.168.0.0/16,
# 10.88.0.0/16, 10.89.0.0/16) and the Kubernetes setup under /run/cornus-k8s
# (10.96.0.0/12, 10.244.0.0/16).
set -euo pipefail
sock=${CORNUS_INCUS_SOCKET:-/var/lib/incus/unix.socket}
sock=${sock#unix://}
net=${CORNUS_INCUS_NETWORK:-cornus}
subnet=${CORNUS_INCUS_SUBNET:-10.77.0.1/24}
pool=${CORNUS_INCUS_POOL:-default}
state=/run/cornus-incus
log=${CORNUS_INCUS_LOG:-/var/log/cornus-incus.log}
api() { curl -sf --max-time 5 --unix-socket "$sock" "http://incus$1"; }
ping() { [ -S "$sock" ] && api /1.0 >/dev/null 2>&1; }
ready() {
	ping && api "/1.0/networks/$net" >/dev/null 2>&1 && api "/1.0/storage-pools/$pool" >/dev/null 2>&1 &&
		api /1.0/profiles/default 2>/dev/null | grep -q "\"pool\":\"$pool\""
}
up() { echo "incus.sh: incusd $(api /1.0 | sed -n 's/.*"server_version":"\([^"]*\)".*/\1/p') is up: CORNUS_INCUS_SOCKET=$sock (network $net $subnet, pool $pool, log $log)"; }
# alive: a zombie (a daemon that died as our child) has an empty cmdline.
alive() { [ -n "$(tr -d '\0' 2>/dev/null <"/proc/$1/cmdline")" ]; }

ready && { up; exit 0; }

if [ ! -x /usr/libexec/incus/incusd ]; then
	if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
		echo "incus.sh: adding Debian bookworm-backports"
		cat >/etc/apt/sources.list.d/cornus-bookworm-backports.sources <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	fi
	echo "incus.sh: installing incus from bookworm-backports"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports incus >/dev/null
fi
command -v curl >/dev/null 2>&1 || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null; }

mkdir -p "$state"
# One starter at a time: a second caller waits here, then finds it running.
exec 9>"$state/start.lock"
flock -w 120 9 || { echo "incus.sh: $state/start.lock is held by another start for 120s" >&2; exit 1; }
ready && { up; exit 0; }

if ! ping; then
	pidfile=$state/incusd.pid
	if [ -f "$pidfile" ] && pid=$(cat "$pidfile") && [ -n "$pid" ] &&
		tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF incusd; then
		echo "incus.sh: incusd (pid $pid) is already starting; waiting"
	else
		echo "incus.sh: starting incusd (log $log)"
		(
			# Hold none of the caller's descriptors (the lock, make's or a CI
			# runner's pipes): a daemon keeping a pipe open hangs whoever reads it.
			for fd in /proc/$BASHPID/fd/*; do
				fd=${fd##*/}
				[ "$fd" -gt 2 ] && eval "exec $fd>&-"
			done
			cd / # not the caller's directory: it may go (a CI clone), breaking getcwd in children
			exec setsid /usr/libexec/incus/incusd --group root </dev/null >>"$log" 2>&1
		) &
		pid=$!
		echo "$pid" >"$pidfile"
	fi
	for _ in $(seq 1 240); do
		ping && break
		alive "$pid" || break
		sleep 0.25
	done
	if ! ping; then
		echo "incus.sh: incusd did not answer on $sock; last log lines:" >&2
		tail -n 20 "$log" >&2
		exit 1
	fi
	incus admin waitready --timeout 60 >/dev/null
fi

if ! api "/1.0/networks/$net" >/dev/null 2>&1; then
	echo "incus.sh: creating network $net ($subnet)"
	# incusd 6.0 walks every host interface while it makes a bridge and
	# fails when one vanishes meanwhile (other runtimes' veths): retry.
	for try in 1 2 3 4 5 6 7 8 9 10; do
		out=$(incus network create "$net" ipv4.address="$subnet" ipv4.nat=true ipv6.address=none 2>&1) && break
		api "/1.0/networks/$net" >/dev/null 2>&1 && incus network delete "$net" >/dev/null 2>&1 || true
		[ "$try" = 10 ] && { echo "incus.sh: $out" >&2; exit 1; }
		sleep 0.5
	done
fi
if ! api "/1.0/storage-pools/$pool" >/dev/null 2>&1; then
	echo "incus.sh: creating storage pool $pool (dir)"
	incus storage create "$pool" dir >/dev/null
fi
if ! api /1.0/profiles/default | grep -q "\"pool\":\"$pool\""; then
	echo "incus.sh: default profile: root disk on $pool"
	incus profile device remove default root >/dev/null 2>&1 || true
	incus profile device add default root disk path=/ pool="$pool" >/dev/null
fi
ready || { echo "incus.sh: incusd is up but the network or pool is missing" >&2; exit 1; }
up
