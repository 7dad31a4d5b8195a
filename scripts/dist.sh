#!/usr/bin/env bash
# dist.sh [--check]: build cornus for every platform it ships for
# (linux/amd64, linux/arm64, darwin/amd64, darwin/arm64, windows/amd64),
# static (CGO_ENABLED=0), into bin/dist/cornus-OS-ARCH[.exe], and print
# each binary's size. With --check, build them and keep nothing: `make
# test`'s check stage fails when one platform stops building (a Linux-only
# call outside a _linux.go file).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
LDFLAGS=${LDFLAGS:--s -w}
targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64"
check=false
[ "${1:-}" = --check ] && check=true
mkdir -p bin/dist
rc=0
for t in $targets; do
	os=${t%/*} arch=${t#*/} ext=
	[ "$os" = windows ] && ext=.exe
	out=bin/dist/cornus-$os-$arch$ext
	$check && out=$(mktemp -u /tmp/cornus-dist.XXXXXX)
	if ! GOOS=$os GOARCH=$arch CGO_ENABLED=0 $GO build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/cornus; then
		echo "dist.sh: cornus does not build for $t" >&2
		rc=1
		continue
	fi
	printf '%-14s %s bytes\n' "$t" "$(stat -c %s "$out")"
	$check && rm -f "$out"
done
exit $rc
