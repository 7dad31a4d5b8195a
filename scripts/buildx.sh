#!/usr/bin/env bash
# buildx.sh: print the path of a docker buildx v0.38.2 binary (the docker
# CLI plugin), built from the Go module proxy on first use and cached
# outside the repository, keyed by version: the BuildKit peer of the build
# benchmarks on dockerd, and a real client of the Docker API proxy's
# BuildKit endpoints (docker build with buildx speaks /grpc and /session).
set -euo pipefail
V=v0.38.2
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cornus/tools
out=$cache/docker-buildx-$V
if [ -x "$out" ]; then echo "$out"; exit 0; fi
mkdir -p "$cache"
exec 9>"$cache/buildx.lock"
flock -w 1800 9
if [ -x "$out" ]; then echo "$out"; exit 0; fi
echo "buildx.sh: building docker buildx $V (first run only, several minutes)" >&2
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin CGO_ENABLED=0 go install -trimpath -ldflags "-s -w -X github.com/docker/buildx/version.Version=$V" "github.com/docker/buildx/cmd/buildx@$V" >&2
mv "$bin/buildx" "$out"
echo "$out"
