#!/usr/bin/env bash
# dockerd.sh: make sure a Docker daemon answers on the socket cornus uses
# (CORNUS_DOCKER_SOCK, default /var/run/docker.sock): start dockerd if it is
# not running and wait for it.
set -euo pipefail
sock=${CORNUS_DOCKER_SOCK:-/var/run/docker.sock}
sock=${sock#unix://}
ping() { curl -sf --max-time 2 --unix-socket "$sock" http://docker/_ping >/dev/null 2>&1; }

ping && exit 0
if ! command -v dockerd >/dev/null 2>&1; then
	echo "dockerd.sh: dockerd is not installed (run scripts/setup.sh)" >&2
	exit 1
fi
log=${CORNUS_DOCKERD_LOG:-/var/log/cornus-dockerd.log}
echo "dockerd.sh: starting dockerd (log: $log)"
(cd / && exec nohup dockerd -H "unix://$sock" >"$log" 2>&1) &
for _ in $(seq 1 120); do
	ping && { echo "dockerd.sh: dockerd is up"; exit 0; }
	sleep 0.25
done
echo "dockerd.sh: dockerd did not answer on $sock within 30s; last log lines:" >&2
tail -n 20 "$log" >&2
exit 1
