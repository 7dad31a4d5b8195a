#!/usr/bin/env bash
# conformance.sh: print the path of the OCI distribution-spec conformance
# test (github.com/opencontainers/distribution-spec/conformance), built
# from the Go module proxy at a pinned version into a cache outside the
# repository keyed by version (goinstall.sh):
#
#   ${CORNUS_TOOL_CACHE:-/var/cache/cornus}/conformance/$V/conformance
#
# A warm rerun only prints the path; a cold one compiles it (~20 s).
set -euo pipefail
V=${CORNUS_CONFORMANCE_VERSION:-v0.0.0-20260831232431-97274622c111}
exec "$(dirname "$0")/goinstall.sh" conformance github.com/opencontainers/distribution-spec/conformance "$V" 600
