#!/usr/bin/env bash
# lint.sh: run golangci-lint with .golangci.yml over the module. The linter
# is built from the Go module proxy at the version below on first use and
# cached outside the repository, keyed by version (~4.5 min cold here).
set -euo pipefail
cd "$(dirname "$0")/.."
V=v2.15.0
cache=${CORNUS_TOOL_CACHE:-/var/cache/cornus}/golangci-lint/$V
bin=$cache/golangci-lint
if [ ! -x "$bin" ]; then
	mkdir -p "$cache"
	echo "lint.sh: building golangci-lint $V (first run only)" >&2
	GOBIN=$cache CGO_ENABLED=0 go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$V"
fi
CGO_ENABLED=0 "$bin" run --allow-parallel-runners ./...
