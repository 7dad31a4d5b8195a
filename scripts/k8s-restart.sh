#!/usr/bin/env bash
# k8s-restart.sh DAEMON [SECONDS]: stop one daemon of the cluster
# scripts/k8s.sh runs (kubelet, apiserver, ...), keep it down SECONDS
# (default 0), and start it again with the very command k8s.sh started it
# with ($state/DAEMON.cmd). The fault drills use it: a node's kubelet
# restarted, the API server briefly unreachable.
set -euo pipefail
state=${CORNUS_K8S_STATE:-/run/cornus-k8s}
name=${1:?usage: k8s-restart.sh DAEMON [SECONDS]}
down=${2:-0}
if [ ! -f "$state/$name.cmd" ] || [ ! -f "$state/$name.pid" ]; then
	echo "k8s-restart.sh: $name has no recorded command in $state (start the cluster with scripts/k8s.sh)" >&2
	exit 1
fi
# shellcheck source=k8s-daemons.sh
. "$(dirname "$0")/k8s-daemons.sh"
stop "$name" || true # a daemon gone already is stopped
sleep "$down"
eval "set -- $(cat "$state/$name.cmd")"
start "$name" "$@"
