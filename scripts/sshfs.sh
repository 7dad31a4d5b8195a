#!/usr/bin/env bash
# sshfs.sh: install sshfs and an OpenSSH server (Debian packages) if
# missing, and start a private sshd on 127.0.0.1 for the mounts bench
# (hack/bench -mounts): its own generated host key, a generated client key
# allowed for root, its own config and pid file under $SSHFS_STATE. The
# system sshd and its config are never touched (the package's own service
# is not started). Idempotent. Prints SSHFS_PORT= and SSHFS_KEY= lines.
set -euo pipefail
state=${SSHFS_STATE:-/run/cornus-sshfs}
port=${SSHFS_PORT:-22022}

need=()
command -v sshfs >/dev/null 2>&1 || need+=(sshfs)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
if [ ${#need[@]} -gt 0 ]; then
	echo "sshfs.sh: installing ${need[*]}" >&2
	apt-get update -qq
	# policy-rc.d 101: the package's own sshd service is not started.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p "$state" /run/sshd
chmod 700 "$state"
[ -f "$state/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$state/host_key"
[ -f "$state/client_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$state/client_key"
cp "$state/client_key.pub" "$state/authorized_keys"
sftp=/usr/lib/openssh/sftp-server
cat >"$state/sshd_config" <<CONF
ListenAddress 127.0.0.1:$port
HostKey $state/host_key
PidFile $state/sshd.pid
AuthorizedKeysFile $state/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp $sftp
CONF

if ! { [ -f "$state/sshd.pid" ] && kill -0 "$(cat "$state/sshd.pid")" 2>/dev/null; }; then
	/usr/sbin/sshd -f "$state/sshd_config" -E "$state/sshd.log"
	for _ in $(seq 50); do
		[ -f "$state/sshd.pid" ] && break
		sleep 0.1
	done
fi
echo "SSHFS_PORT=$port"
echo "SSHFS_KEY=$state/client_key"
