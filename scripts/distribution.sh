#!/usr/bin/env bash
# distribution.sh: print the path of distribution's registry
# (github.com/distribution/distribution/v3/cmd/registry), the reference
# the registry bench rows compare cornus serve with, built from the Go
# module proxy at a pinned version into a cache outside the repository
# keyed by version:
#
#   ${CORNUS_TOOL_CACHE:-/var/cache/cornus}/distribution/$V/registry
#
# A warm rerun only prints the path; a cold one compiles it (~4 min on
# 2 cores).
set -euo pipefail
V=${CORNUS_DISTRIBUTION_VERSION:-v3.1.2}
cache=${CORNUS_TOOL_CACHE:-/var/cache/cornus}/distribution/$V
bin=$cache/registry

if [ ! -x "$bin" ]; then
	mkdir -p "$cache"
	exec 9>"$cache/build.lock"
	flock -w 900 9 || { echo "distribution.sh: $cache/build.lock held for 15 minutes" >&2; exit 1; }
	if [ ! -x "$bin" ]; then
		GOBIN=$cache CGO_ENABLED=0 go install "github.com/distribution/distribution/v3/cmd/registry@$V" >&2
	fi
fi
echo "$bin"
