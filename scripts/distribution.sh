#!/usr/bin/env bash
# distribution.sh: print the path of distribution's registry
# (github.com/distribution/distribution/v3/cmd/registry), the reference
# the registry bench rows compare cornus serve with, built from the Go
# module proxy at a pinned version into a cache outside the repository
# keyed by version (goinstall.sh):
#
#   ${CORNUS_TOOL_CACHE:-/var/cache/cornus}/distribution/$V/registry
#
# A warm rerun only prints the path; a cold one compiles it (~4 min on
# 2 cores).
set -euo pipefail
V=${CORNUS_DISTRIBUTION_VERSION:-v3.1.2}
exec "$(dirname "$0")/goinstall.sh" distribution github.com/distribution/distribution/v3/cmd/registry "$V" 900
