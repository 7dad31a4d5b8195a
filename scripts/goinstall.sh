#!/usr/bin/env bash
# goinstall.sh NAME PACKAGE VERSION LOCKWAIT: print the path of PACKAGE's
# command, built from the Go module proxy at VERSION into a cache outside
# the repository keyed by name and version:
#
#   ${CORNUS_TOOL_CACHE:-/var/cache/cornus}/NAME/VERSION/<command>
#
# A warm rerun only prints the path. Concurrent first runs build once
# (the later ones wait up to LOCKWAIT seconds). conformance.sh,
# distribution.sh and helm.sh use it.
set -euo pipefail
name=$1 pkg=$2 V=$3 wait=$4
cache=${CORNUS_TOOL_CACHE:-/var/cache/cornus}/$name/$V
bin=$cache/${pkg##*/}

if [ ! -x "$bin" ]; then
	mkdir -p "$cache"
	exec 9>"$cache/build.lock"
	flock -w "$wait" 9 || { echo "goinstall.sh: $cache/build.lock held for $wait s" >&2; exit 1; }
	if [ ! -x "$bin" ]; then
		GOBIN=$cache CGO_ENABLED=0 go install "$pkg@$V" >&2
	fi
fi
echo "$bin"
