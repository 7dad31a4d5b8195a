#!/usr/bin/env bash
# helm.sh: print the path of a helm v4.3.2 binary, built from the Go module
# proxy on first use and cached outside the repository, keyed by version
# (goinstall.sh; the chart's lint, its golden test and the in-cluster
# server's e2e).
set -euo pipefail
exec "$(dirname "$0")/goinstall.sh" helm helm.sh/helm/v4/cmd/helm v4.3.2 900
