#!/usr/bin/env bash
# netns.sh: make /run/netns the shared bind mount of itself that the first
# `ip netns add` on a machine would make. Runtimes (the Kubernetes node's
# containerd, podman's netavark) keep their network namespaces as bind
# mounts under /run/netns; when ip-netns later makes that mount, it hides
# the namespaces mounted before it, which then can never be removed (pods
# stay Terminating, containers cannot be deleted). Run before starting
# them; idempotent.
set -euo pipefail
mkdir -p /run/netns
mountpoint -q /run/netns || mount --bind /run/netns /run/netns
mount --make-shared /run/netns
