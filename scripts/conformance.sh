#!/usr/bin/env bash
# conformance.sh: print the path of the OCI distribution-spec conformance
# test (github.com/opencontainers/distribution-spec/conformance), built
# from the Go module proxy at a pinned version into a cache outside the
# repository keyed by version:
#
#   ${CORNUS_TOOL_CACHE:-/var/cache/cornus}/conformance/$V/conformance
#
# A warm rerun only prints the path; a cold one compiles it (~20 s).
set -euo pipefail
V=${CORNUS_CONFORMANCE_VERSION:-v0.0.0-20260831232431-97274622c111}
cache=${CORNUS_TOOL_CACHE:-/var/cache/cornus}/conformance/$V
bin=$cache/conformance

if [ ! -x "$bin" ]; then
	mkdir -p "$cache"
	exec 9>"$cache/build.lock"
	flock -w 600 9 || { echo "conformance.sh: $cache/build.lock held for 10 minutes" >&2; exit 1; }
	if [ ! -x "$bin" ]; then
		GOBIN=$cache CGO_ENABLED=0 go install "github.com/opencontainers/distribution-spec/conformance@$V" >&2
	fi
fi
echo "$bin"
