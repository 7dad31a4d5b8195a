#!/usr/bin/env bash
# helm.sh: print the path of a helm v4.3.2 binary, built from the Go module
# proxy on first use and cached outside the repository, keyed by version
# (the chart's lint, its golden test and the in-cluster server's e2e).
set -euo pipefail
V=v4.3.2
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cornus/tools
out=$cache/helm-$V
if [ -x "$out" ]; then echo "$out"; exit 0; fi
mkdir -p "$cache"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"
cat > go.mod <<EOM
module helmbuild

go 1.26

require helm.sh/helm/v4 $V
EOM
printf '//go:build tools\n\npackage tools\n\nimport _ "helm.sh/helm/v4/cmd/helm"\n' > tools.go
echo "helm.sh: building helm $V (first run only, ~4 min)" >&2
go get "helm.sh/helm/v4/cmd/helm@$V" >/dev/null 2>&1
go mod tidy >/dev/null 2>&1 || true
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$V" -o "$out.tmp" helm.sh/helm/v4/cmd/helm
mv "$out.tmp" "$out"
echo "$out"
