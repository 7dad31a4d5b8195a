#!/usr/bin/env bash
# k8s-build.sh: build what cornus's single-node test cluster runs, from the
# Go module proxy, into a cache outside the repository keyed by version:
#
#   ${CORNUS_K8S_CACHE:-/var/cache/cornus/k8s}/$CORNUS_K8S_VERSION/bin
#
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and
# kube-proxy (Kubernetes $CORNUS_K8S_VERSION), plus coredns: the cluster DNS
# every real cluster has (peers resolve each other by name through it), a
# CoreDNS with only the plugins a cluster DNS needs. Prints the bin
# directory. A warm rerun (every binary present) does nothing and takes well
# under a second; a cold one compiles ~2,000 packages (about 15 minutes on 2
# cores; ~1 minute with a warm Go build cache).
#
# Kubernetes is not meant to be consumed as a Go module: k8s.io/kubernetes
# requires its staging repositories at v0.0.0, so a scratch module replaces
# each of them with the matching published v0.X.Y tag.
set -euo pipefail
KV=${CORNUS_K8S_VERSION:-v1.37.2}
DNSV=${CORNUS_COREDNS_VERSION:-v1.15.0}
cache=${CORNUS_K8S_CACHE:-/var/cache/cornus/k8s}/$KV
bin=$cache/bin
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
staging=v0.${KV#v1.}
stagingmods=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
	cloud-provider cluster-bootstrap code-generator component-base component-helpers
	controller-manager cri-api cri-client cri-streaming csi-translation-lib
	dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
	kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
	mount-utils pod-security-admission sample-apiserver streaming)

missing() {
	local c
	for c in "$@"; do [ -x "$bin/$c" ] || return 0; done
	return 1
}
missing "${cmds[@]}" coredns || { echo "$bin"; exit 0; }

mkdir -p "$bin"
# One builder at a time; a second caller waits and then finds the binaries.
exec 9>"$cache/build.lock"
flock -w 3600 9 || { echo "k8s-build.sh: $cache/build.lock held for an hour" >&2; exit 1; }

# replaces writes the replace block pinning every staging module.
replaces() {
	local m
	printf 'replace (\n'
	for m in "${stagingmods[@]}"; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$staging"; done
	printf ')\n'
}

if missing "${cmds[@]}"; then
	mod=$cache/module
	mkdir -p "$mod"
	cd "$mod"
	if [ ! -f go.sum ]; then
		{ printf 'module cornusk8sbuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$KV"; replaces; } >go.mod
		pkgs=()
		for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c@$KV"); done
		echo "k8s-build.sh: resolving k8s.io/kubernetes $KV" >&2
		go get "${pkgs[@]}" >&2
	fi
	# Version stamps so the apiserver and kubelet report $KV.
	minor=${KV#v1.}
	minor=${minor%%.*}
	ld="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld="$ld -X $p.gitVersion=$KV -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
	done
	pkgs=()
	for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
	echo "k8s-build.sh: building ${cmds[*]} $KV into $bin (cold: ~15 min on 2 cores)" >&2
	t0=$(date +%s)
	rm -rf "$bin.tmp" && mkdir -p "$bin.tmp"
	CGO_ENABLED=0 go build -trimpath -ldflags="$ld" -o "$bin.tmp/" "${pkgs[@]}" >&2
	mv "$bin.tmp"/* "$bin/" && rmdir "$bin.tmp"
	echo "k8s-build.sh: Kubernetes built in $(($(date +%s) - t0))s" >&2
fi

if missing coredns; then
	# A CoreDNS main with the plugins a cluster DNS uses (CoreDNS's own
	# build lists every plugin, cloud DNS providers included).
	mod=$cache/coredns
	mkdir -p "$mod"
	cd "$mod"
	cat >main.go <<'EOG'
// Command coredns is CoreDNS with the plugins a cluster DNS needs.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
)

func init() {
	dnsserver.Directives = []string{"bind", "errors", "loadbalance", "kubernetes", "forward"}
}

func main() { coremain.Run() }
EOG
	if [ ! -f go.sum ]; then
		{ printf 'module cornuscorednsbuild\n\ngo 1.26.0\n\n'; replaces; } >go.mod
		echo "k8s-build.sh: resolving github.com/coredns/coredns $DNSV" >&2
		go get "github.com/coredns/coredns@$DNSV" >&2
		go mod tidy >&2
	fi
	echo "k8s-build.sh: building coredns $DNSV into $bin" >&2
	t0=$(date +%s)
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$bin/coredns.tmp" . >&2
	mv "$bin/coredns.tmp" "$bin/coredns"
	echo "k8s-build.sh: coredns built in $(($(date +%s) - t0))s" >&2
fi
echo "$bin"
