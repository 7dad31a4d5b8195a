#!/usr/bin/env bash
# docker-compose.sh: print the path of a docker compose v5.6.0 binary, built
# from the Go module proxy on first use and cached outside the repository,
# keyed by version (the peer for benchmarks and the Docker API proxy tests).
set -euo pipefail
V=v5.6.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cornus/tools
out=$cache/docker-compose-$V
if [ -x "$out" ]; then echo "$out"; exit 0; fi
mkdir -p "$cache"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"
# compose's go.mod carries exclude directives that `go install` refuses, so a
# scratch module requires it and repeats those excludes.
cat > go.mod <<EOM
module composebuild

go 1.26

require github.com/docker/compose/v5 $V

exclude (
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2
)
EOM
printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/docker/compose/v5/cmd"\n' > tools.go
echo "docker-compose.sh: building docker compose $V (first run only, ~3 min)" >&2
go mod tidy >/dev/null 2>&1 || true
go get "github.com/docker/compose/v5/cmd@$V" >/dev/null 2>&1
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/docker/compose/v5/internal.Version=$V" -o "$out.tmp" github.com/docker/compose/v5/cmd
mv "$out.tmp" "$out"
echo "$out"
