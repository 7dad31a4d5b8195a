#!/usr/bin/env bash
# buildkit.sh: make buildkitd (and buildctl, for debugging) available for
# cornus's builds on the backends without a builder of their own (bare,
# incus, kubernetes: the OCI worker; containerd: its containerd worker).
# Built from the Go module proxy at a pinned version into a cache outside
# the repository keyed by version, then linked into /usr/local/bin:
#
#   ${CORNUS_TOOL_CACHE:-/var/cache/cornus}/buildkit/$V/bin
#
# A warm rerun does nothing. A cold one compiles buildkitd (~5 min on 2
# cores; ~57 MB). It needs runc (the OCI worker's runtime) and the CNI
# plugins (its bridge network), which scripts/containerd.sh installs.
set -euo pipefail
V=${CORNUS_BUILDKIT_VERSION:-v0.34.2}
cache=${CORNUS_TOOL_CACHE:-/var/cache/cornus}/buildkit/$V
bin=$cache/bin

if [ ! -x "$bin/buildkitd" ] || [ ! -x "$bin/buildctl" ]; then
	mkdir -p "$cache"
	exec 9>"$cache/build.lock"
	flock -w 1800 9 || { echo "buildkit.sh: $cache/build.lock held for 30 minutes" >&2; exit 1; }
fi
if [ ! -x "$bin/buildkitd" ] || [ ! -x "$bin/buildctl" ]; then
	mod=$cache/module
	mkdir -p "$mod"
	cd "$mod"
	# buildkit's go.mod has exclude directives, which `go install
	# pkg@version` refuses: a scratch module requires it and repeats them.
	cat >go.mod <<EOM
module cornusbuildkitbuild

go 1.26

require github.com/moby/buildkit $V

exclude (
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2
)
EOM
	printf '//go:build tools\n\npackage main\n\nimport (\n\t_ "github.com/moby/buildkit/cmd/buildctl"\n\t_ "github.com/moby/buildkit/cmd/buildkitd"\n)\n' >tools.go
	echo "buildkit.sh: resolving github.com/moby/buildkit $V" >&2
	GOFLAGS=-mod=mod go mod tidy >&2
	echo "buildkit.sh: building buildkitd and buildctl $V into $bin (cold: ~5 min on 2 cores)" >&2
	t0=$(date +%s)
	rm -rf "$bin.tmp" && mkdir -p "$bin.tmp"
	for c in buildkitd buildctl; do
		CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags '-s -w' -o "$bin.tmp/$c" "github.com/moby/buildkit/cmd/$c" >&2
	done
	mkdir -p "$bin" && mv "$bin.tmp"/* "$bin/" && rmdir "$bin.tmp"
	echo "buildkit.sh: built in $(($(date +%s) - t0))s" >&2
fi
for c in buildkitd buildctl; do
	[ "$(readlink "/usr/local/bin/$c" 2>/dev/null)" = "$bin/$c" ] || ln -sfn "$bin/$c" "/usr/local/bin/$c"
done
echo "$bin"
