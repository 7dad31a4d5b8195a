#!/usr/bin/env bash
# setup.sh: install and start what cornus's tests and demo need on a fresh
# Debian 12 machine (run as root): busybox-static for local test images, a
# Docker daemon, the devcontainer CLI (a client of the Docker API proxy),
# and every other backend's daemon (containerd, incusd, podman rootful and
# rootless, the Kubernetes test cluster: its first run builds Kubernetes,
# ~15 min, cached by version), and buildkitd for builds on the backends without a builder
# of their own (its first run builds it, ~5 min, cached by version), and
# the OCI conformance test (~20 s, cached by version), skopeo, and helm
# (the chart's tests; its first run builds it, ~7 min, cached by version).
# `setup.sh demo` does only what `make demo` needs: busybox and dockerd
# (the demo runs on the default backend).
# Idempotent; safe to run on every `make test` / `make demo`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

need=()
[ -x /bin/busybox ] && /bin/busybox --list >/dev/null 2>&1 || need+=(busybox-static)
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
	echo "setup: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ "${1:-}" = demo ]; then
	exec "$here/dockerd.sh"
fi
# skopeo: a client of the server's registry in the tests.
if ! command -v skopeo >/dev/null 2>&1; then
	echo "setup: installing skopeo"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq skopeo >/dev/null
fi
# The devcontainer CLI, a real client of the Docker API proxy in the tests.
if ! command -v devcontainer >/dev/null 2>&1 || [ "$(devcontainer --version 2>/dev/null)" != "0.89.0" ]; then
	echo "setup: installing @devcontainers/cli@0.89.0 (npm)"
	npm install -g --no-fund --no-audit @devcontainers/cli@0.89.0 >/dev/null
fi
"$here/dockerd.sh"
"$here/containerd.sh"
"$here/buildkit.sh" >/dev/null
"$here/conformance.sh" >/dev/null
"$here/incus.sh"
"$here/podman.sh"
"$here/podman-rootless.sh"
"$here/k8s.sh"
"$here/sshfs.sh" >/dev/null
"$here/helm.sh" >/dev/null
