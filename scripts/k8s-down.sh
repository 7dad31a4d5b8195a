#!/usr/bin/env bash
# k8s-down.sh [--keep-data]: tear down what scripts/k8s.sh started and
# leave no process, mount, network namespace, bridge or iptables chain of
# it behind. Idempotent. Pods are deleted through the API first while the
# kubelet still runs, so the runtime tears their sandboxes down itself
# (CNI DEL: veths, host ports, masquerade rules); whatever that misses is
# removed below, matched by this cluster's own names only (its containerd
# socket, its CNI network name, KUBE-* chains) — never cornus's other
# daemons' (dockerd, /run/cornus-containerd, podman). --keep-data keeps
# etcd's and the kubelet's data (k8s.sh uses it to clear a half start);
# the image store in /var/lib/cornus-k8s/containerd is always kept.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
state=${CORNUS_K8S_STATE:-/run/cornus-k8s}
data=${CORNUS_K8S_DATA:-/var/lib/cornus-k8s}
bridge=cornusk8s0
cni_name=cornus-k8s-pods
keep=0
[ "${1:-}" = --keep-data ] && keep=1
[ -d "$state" ] || [ -d "$data/kubelet" ] || ip link show "$bridge" >/dev/null 2>&1 || exit 0

# shellcheck source=k8s-daemons.sh
. "$here/k8s-daemons.sh" # alive, stop

# 1. Pods, through the API, while the kubelet can still stop them cleanly.
if alive apiserver && alive kubelet && [ -f "$state/admin.kubeconfig" ]; then
	timeout 60 kubectl --kubeconfig "$state/admin.kubeconfig" delete pods --all --all-namespaces \
		--grace-period=1 --wait=true >/dev/null 2>&1 || true
fi
stop coredns proxy kubelet scheduler kcm

# 2. Containers the kubelet did not get to: stop their tasks and sandboxes
# through containerd, so runc and the shims go away.
sock=$state/containerd.sock
if [ -S "$sock" ] && alive containerd; then
	C="ctr --address $sock --namespace k8s.io"
	for t in $($C tasks ls -q 2>/dev/null); do $C tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
	sleep 1
	for t in $($C tasks ls -q 2>/dev/null); do $C tasks rm -f "$t" >/dev/null 2>&1; done
	for c in $($C containers ls -q 2>/dev/null); do $C containers rm "$c" >/dev/null 2>&1; done
fi
stop containerd apiserver etcd
# Shims of this containerd only (matched by its socket).
for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock( |$)"); do kill -9 "$pid" 2>/dev/null; done

# 3. Mounts under this cluster's directories (deepest first).
findmnt -rn -o TARGET | grep -E "^($state|$data)/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done

# 4. Network namespaces that belonged to this cluster's pods: CNI results
# of our network name the runtime left behind name them.
for r in /var/lib/cni/results/"$cni_name"-*; do
	[ -f "$r" ] || continue
	nsp=$(grep -o '"netns":"[^"]*"' "$r" 2>/dev/null | head -1 | cut -d'"' -f4)
	[ -n "$nsp" ] && [ -e "$nsp" ] && { umount "$nsp" 2>/dev/null; rm -f "$nsp"; }
	rm -f "$r"
done
for nsp in /var/run/netns/cni-*; do
	[ -e "$nsp" ] || continue
	# A namespace whose only interface pairs with our bridge is ours.
	n=${nsp##*/}
	if ip -n "$n" -o link show 2>/dev/null | grep -q 'eth0@if' &&
		ip -o link show master "$bridge" 2>/dev/null | grep -q "link-netns $n"; then
		ip netns del "$n" 2>/dev/null
	fi
done
ip link show "$bridge" >/dev/null 2>&1 && ip link del "$bridge"
rm -rf "/var/lib/cni/networks/$cni_name"

# 5. iptables: kube-proxy's and the kubelet's KUBE-* chains, and the CNI
# rules and chains of our network (their comments carry its name).
for ipt in iptables ip6tables iptables-legacy ip6tables-legacy; do
	command -v "$ipt" >/dev/null 2>&1 || continue
	for t in filter nat mangle; do
		rules=$($ipt -t $t -S 2>/dev/null) || continue
		ours=$(grep -F -- "$cni_name" <<<"$rules" | grep -o -- '-j CNI-[A-Za-z0-9-]*' | awk '{print $2}' | sort -u | grep -v '^CNI-HOSTPORT-')
		{ grep -E -- '^-A .*-j KUBE-' <<<"$rules"; grep -E -- '^-A ' <<<"$rules" | grep -F -- "$cni_name"; } |
			sed 's/^-A/-D/' | while read -r rule; do eval "$ipt -t $t $rule" 2>/dev/null; done
		chains="$(awk '/^-N KUBE-/{print $2}' <<<"$rules") $ours"
		for ch in $chains; do $ipt -t $t -F "$ch" 2>/dev/null; done
		for ch in $chains; do $ipt -t $t -X "$ch" 2>/dev/null; done
	done
done

# 6. The kubelet's cgroups (empty once every container is gone).
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods /sys/fs/cgroup/kubepods; do
	[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
done

rm -rf /tmp/hostpath_pv
if [ $keep = 0 ]; then
	rm -rf "$data/etcd" "$data/kubelet" "$data/pod-logs" "$state"
else
	rm -f "$state"/*.sock "$state"/*.sock.ttrpc
fi
echo "k8s-down.sh: cluster stopped"
