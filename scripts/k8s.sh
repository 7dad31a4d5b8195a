#!/usr/bin/env bash
# k8s.sh: make sure cornus's single-node Kubernetes test cluster answers,
# and print how to reach it. Idempotent: when the cluster already answers
# it only checks the test images are on the node and exits (well under a
# second). A cold start takes seconds once scripts/k8s-build.sh has built
# the binaries (it runs it; that build is the slow part, once per version).
#
# What runs (all host processes, each with its pid file in $state):
#   etcd (127.0.0.1:12379), kube-apiserver (:16443; token auth, RBAC),
#   kube-controller-manager (with the hostPath provisioner: the cluster's
#   default StorageClass "cornus-hostpath", as an operator would provide
#   storage), kube-scheduler, a private containerd with CRI, the kubelet
#   (node "cornus-k8s-node"), kube-proxy (iptables) and CoreDNS (the cluster
#   DNS, on the pod bridge's gateway).
#
# It shares nothing with cornus's other private daemons: dockerd
# (scripts/dockerd.sh), the containerd at /run/cornus-containerd
# (scripts/containerd.sh), podman at /run/cornus-podman. Its own state
# ($state = /run/cornus-k8s: sockets, pid files, PKI, kubeconfigs, logs),
# data (/var/lib/cornus-k8s: etcd, containerd's root, the kubelet's root),
# containerd socket, runc root, CNI network "cornus-k8s-pods" on bridge
# cornusk8s0 with 10.244.0.0/24 (cornus's CNI uses 10.4.0.0/16, docker
# 172.17.0.0/16 and 192.168.0.0/16, podman 10.88.0.0/16), services in
# 10.96.0.0/16. Shim sockets live in /run/containerd/s for every containerd
# 1.6 (named by a hash of the daemon socket, so they never collide).
#
# These machines (Debian 12 VMs): cgroup v1 hybrid (kubelet failCgroupV1:
# false, cgroupfs, runc), no CAP_SYS_RESOURCE (containerd's CRI
# restrict_oom_score_adj, and containerd keeps its inherited oom_score).
# The node tunes what tests wait on: container restarts back off at most
# 1 s, net.core.somaxconn may be set by pods (allowedUnsafeSysctls), and
# pods/log can return stdout and stderr apart (the alpha feature
# PodLogsQuerySplitStreams).
#
# Images: there is no registry, so the pause image (hack/k8s-pause) and the
# busybox test images are built locally and imported into the node
# containerd's k8s.io namespace: cornus-test/busybox:1 (e2e),
# cornus-test/busybox:2 (the contract suite's, with udpsink),
# cornus-test/noenv:1 (the contract suite's image without Env),
# cornus-bench/busybox:1 (make bench), cornus-demo/busybox:1 (make demo).
#
# Afterwards (printed at the end):
#   KUBECONFIG=/run/cornus-k8s/cornus.kubeconfig  cornus's service account
#     "cornus" in namespace "cornus", bound to exactly the Role of
#     the chart's templates/rbac.yaml (charts/cornus, as `cornus k8s rbac`
#     prints it: what the tests use)
#   /run/cornus-k8s/admin.kubeconfig  cluster admin (scripts, kubectl)
# Stop everything with scripts/k8s-down.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
state=${CORNUS_K8S_STATE:-/run/cornus-k8s}
data=${CORNUS_K8S_DATA:-/var/lib/cornus-k8s}
ns=${CORNUS_K8S_NAMESPACE:-cornus}
apiport=16443
node=cornus-k8s-node
bridge=cornusk8s0
podnet=10.244.0
svcnet=10.96.0.0/16
cni_name=cornus-k8s-pods
images=(cornus-test/busybox:1 cornus-test/busybox:2 cornus-test/noenv:1 cornus-bench/busybox:1 cornus-demo/busybox:1)
t0=$(date +%s.%N)
say() { printf 'k8s.sh [%5.1fs] %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$*"; }
admin() { kubectl --kubeconfig "$state/admin.kubeconfig" "$@"; }
ctrk() { ctr --address "$state/containerd.sock" --namespace k8s.io "$@"; }
daemons=(etcd containerd apiserver kcm scheduler kubelet proxy coredns)
# answers: every daemon of ours lives and the node is Ready (a node stays
# Ready in the API for a while after its kubelet died).
answers() {
	local d
	for d in "${daemons[@]}"; do
		[ -f "$state/$d.pid" ] && kill -0 "$(cat "$state/$d.pid")" 2>/dev/null || return 1
	done
	# A cluster started by an older k8s.sh (without the registry hosts
	# directory, or without the daemons' recorded commands) starts again.
	grep -q "config_path = \"$state/certs.d\"" "$state/containerd.toml" 2>/dev/null && [ -f "$state/kubelet.cmd" ] || return 1
	[ -f "$state/pki/token" ] && [ -f "$state/cornus.kubeconfig" ] &&
		curl -sfk -A cornus-k8s.sh --max-time 2 -H "Authorization: Bearer $(cat "$state/pki/token")" \
			"https://127.0.0.1:$apiport/api/v1/nodes/$node" 2>/dev/null | grep -q '"type":"Ready","status":"True"'
}
report() {
	say "cluster is up: KUBECONFIG=$state/cornus.kubeconfig (namespace $ns, the shipped Role); admin: $state/admin.kubeconfig"
}

# --- images: built locally, imported into the node's containerd
ensure_images() {
	local have missing=() ref w
	have=$(ctrk images ls -q 2>/dev/null)
	grep -qx "cornus.local/k8s-pause:1" <<<"$have" || missing+=(pause)
	for ref in "${images[@]}"; do grep -qx "docker.io/$ref" <<<"$have" || missing+=("$ref"); done
	[ ${#missing[@]} -gt 0 ] || return 0
	w=$(mktemp -d)
	for ref in "${missing[@]}"; do
		if [ "$ref" = pause ]; then
			mkdir -p "$w/pauseroot"
			(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$w/pauseroot/pause" ./hack/k8s-pause)
			pause_image "$w/pauseroot" "$w/pause.tar"
			ctrk images import "$w/pause.tar" >/dev/null
		else
			flags=()
			[ "$ref" = cornus-test/busybox:2 ] && flags=(-udpsink)
			[ "$ref" = cornus-test/noenv:1 ] && flags=(-no-env)
			(cd "$repo" && go run ./hack/mkimage -ref "$ref" "${flags[@]}" -o "$w/img.tar")
			ctrk images import "$w/img.tar" >/dev/null
		fi
	done
	rm -rf "$w"
	say "imported into the node: ${missing[*]}"
}

# pause_image ROOTFS OUT: a one-layer docker-archive of ROOTFS running /pause.
pause_image() {
	local root=$1 out=$2 w lsha csha
	w=$(mktemp -d)
	tar --numeric-owner --owner=0 --group=0 -C "$root" -cf "$w/layer.tar" .
	lsha=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
	mkdir "$w/$lsha" && mv "$w/layer.tar" "$w/$lsha/layer.tar"
	printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$lsha" >"$w/config.json"
	csha=$(sha256sum "$w/config.json" | cut -d' ' -f1)
	mv "$w/config.json" "$w/$csha.json"
	printf '[{"Config":"%s.json","RepoTags":["cornus.local/k8s-pause:1"],"Layers":["%s/layer.tar"]}]' "$csha" "$lsha" >"$w/manifest.json"
	tar -C "$w" -cf "$out" manifest.json "$csha.json" "$lsha"
	rm -rf "$w"
}

if answers; then
	ensure_images
	report
	exit 0
fi

need=()
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v conntrack >/dev/null 2>&1 || need+=(conntrack)
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v bc >/dev/null 2>&1 || need+=(bc)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
[ -x /bin/busybox ] || need+=(busybox-static)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/portmap ] || need+=(containernetworking-plugins)
if [ ${#need[@]} -gt 0 ]; then
	echo "k8s.sh: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
bin=$("$here/k8s-build.sh")

mkdir -p "$state"/{pki,logs,cni} "$data"/{etcd,containerd,kubelet,pod-logs}
chmod 0700 "$state" "$data"
# One starter at a time: a second caller waits here, then finds it up.
exec 9>"$state/start.lock"
flock -w 300 9 || { echo "k8s.sh: $state/start.lock is held by another start" >&2; exit 1; }
if answers; then
	ensure_images
	report
	exit 0
fi
# Whatever a half-started cluster left (processes, mounts) goes first.
"$here/k8s-down.sh" --keep-data >/dev/null 2>&1 || true
mkdir -p "$state"/{pki,logs,cni,certs.d}
cd "$state"

# shellcheck source=k8s-daemons.sh
. "$here/k8s-daemons.sh" # start, alive
# waitfor WHAT DAEMON CHECK...: poll CHECK for 60 s while DAEMON lives.
waitfor() {
	local what=$1 daemon=$2
	shift 2
	for _ in $(seq 1 240); do
		"$@" && return 0
		alive "$daemon" || break
		sleep 0.25
	done
	echo "k8s.sh: $what did not come up; last lines of $state/logs/$daemon.log:" >&2
	tail -n 25 "$state/logs/$daemon.log" >&2
	exit 1
}

node_ip=$(ip -4 route get 1.1.1.1 | awk '{for (i = 1; i <= NF; i++) if ($i == "src") print $(i + 1)}')
# --- PKI: a CA, the apiserver's serving cert, the service-account key, an
# admin token (kept across restarts so kubeconfigs stay valid).
if [ ! -f pki/token ]; then
	(
		cd pki
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj /CN=cornus-k8s-ca 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' "$node_ip" >ext.cnf
		openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile ext.cnf 2>/dev/null
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
		echo "$token,cornus-admin,cornus-admin,system:masters" >tokens.csv
		echo "$token" >token.tmp && mv token.tmp token
	)
fi
# The apiserver's client certificate towards the kubelet (exec, logs,
# port-forward), signed by the same CA the kubelet trusts.
if [ ! -f pki/kubelet-client.crt ]; then
	(
		cd pki
		openssl req -newkey rsa:2048 -nodes -keyout kubelet-client.key -out kubelet-client.csr -subj "/CN=kube-apiserver-kubelet-client" 2>/dev/null
		printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >client.cnf
		openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out kubelet-client.crt -days 3650 -extfile client.cnf 2>/dev/null
	)
fi
kubeconfig() { # kubeconfig USER TOKEN: a kubeconfig for this cluster
	cat <<EOK
apiVersion: v1
kind: Config
clusters: [{name: cornus-k8s, cluster: {server: "https://127.0.0.1:$apiport", certificate-authority: $state/pki/ca.crt}}]
users: [{name: $1, user: {token: "$2"}}]
contexts: [{name: $1, context: {cluster: cornus-k8s, user: $1, namespace: $ns}}]
current-context: $1
EOK
}
kubeconfig cornus-admin "$(cat pki/token)" >admin.kubeconfig

# --- etcd
start etcd etcd --name cornus-k8s --data-dir "$data/etcd" \
	--listen-client-urls http://127.0.0.1:12379 --advertise-client-urls http://127.0.0.1:12379 \
	--listen-peer-urls http://127.0.0.1:12380 --initial-advertise-peer-urls http://127.0.0.1:12380 \
	--initial-cluster cornus-k8s=http://127.0.0.1:12380 --listen-metrics-urls ""

# --- containerd: private instance with CRI (own socket, root, state, runc root)
cat >containerd.toml <<EOC
# Written by scripts/k8s.sh; rewritten on each start.
version = 2
root = "$data/containerd"
state = "$state/containerd"
oom_score = 0
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$state/containerd.sock"
[ttrpc]
  address = "$state/containerd.sock.ttrpc"
[debug]
  address = "$state/containerd-debug.sock"
[metrics]
  address = ""
[plugins."io.containerd.runtime.v1.linux"]
  runtime_root = "$state/runc-v1"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "cornus.local/k8s-pause:1"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # no CAP_SYS_RESOURCE here: runc cannot set a negative oom_score_adj
  restrict_oom_score_adj = true
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$state/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni"
  # Registries the node trusts (HOST:PORT/hosts.toml, read at each pull:
  # the in-cluster cornus server's registry, with its chart's CA).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$state/certs.d"
EOC
cat >cni/10-$cni_name.conflist <<EOC
{"cniVersion": "0.4.0", "name": "$cni_name", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$podnet.0/24", "gateway": "$podnet.1"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}, "snat": true}]}
EOC
"$here/netns.sh" # before any pod has a network namespace
start containerd containerd --config "$state/containerd.toml"

# --- the pod bridge, made before any pod so CoreDNS can bind its gateway
# address (the bridge plugin adopts it).
ip link show "$bridge" >/dev/null 2>&1 || ip link add "$bridge" type bridge
# A bridge without an address of its own takes its lowest port's, so it
# changes as pods come and go; pods keep the old one for the gateway in
# their ARP caches, and their traffic to the node (CoreDNS, a cornus
# server) is black-holed until it expires (~15 s). Docker and the bridge
# plugin, when they make the bridge, fix its address; so do we.
if [ "$(cat /sys/class/net/$bridge/addr_assign_type)" != 3 ]; then
	ip link set "$bridge" address "$(od -An -N5 -tx1 /dev/urandom | tr -s ' ' ':' | sed 's/^:/02:/')"
fi
ip addr show dev "$bridge" | grep -q "inet $podnet.1/24" || ip addr add "$podnet.1/24" dev "$bridge"
ip link set "$bridge" up
modprobe br_netfilter 2>/dev/null || true
sysctl -qw net.ipv4.ip_forward=1
# dockerd sets the FORWARD policy to DROP, and with br_netfilter even
# traffic between two pods on the bridge is forwarded: let ours through
# (the comment carries the network's name, so k8s-down.sh finds them).
for dir in -i -o; do
	iptables -C FORWARD $dir "$bridge" -m comment --comment "$cni_name" -j ACCEPT 2>/dev/null ||
		iptables -I FORWARD $dir "$bridge" -m comment --comment "$cni_name" -j ACCEPT
done

# --- kube-apiserver
start apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:12379 \
	--bind-address=0.0.0.0 --advertise-address="$node_ip" --secure-port=$apiport \
	--tls-cert-file=pki/apiserver.crt --tls-private-key-file=pki/apiserver.key --client-ca-file=pki/ca.crt \
	--token-auth-file=pki/tokens.csv --authorization-mode=Node,RBAC \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file=pki/sa.pub --service-account-signing-key-file=pki/sa.key \
	--service-cluster-ip-range=$svcnet --allow-privileged=true --profiling=false \
	--feature-gates=PodLogsQuerySplitStreams=true \
	--kubelet-preferred-address-types=InternalIP,Hostname \
	--kubelet-client-certificate=pki/kubelet-client.crt --kubelet-client-key=pki/kubelet-client.key
waitfor "containerd" containerd test -S "$state/containerd.sock"
ensure_images
waitfor "kube-apiserver" apiserver curl -sfk -A cornus-k8s.sh --max-time 2 -H "Authorization: Bearer $(cat pki/token)" "https://127.0.0.1:$apiport/readyz" -o /dev/null
say "containerd and apiserver up"

start kcm "$bin/kube-controller-manager" --kubeconfig="$state/admin.kubeconfig" --leader-elect=false \
	--service-account-private-key-file=pki/sa.key --root-ca-file=pki/ca.crt --use-service-account-credentials=false \
	--bind-address=127.0.0.1 --secure-port=10257 --controllers='*,-nodeipam' --profiling=false \
	--enable-hostpath-provisioner=true
start scheduler "$bin/kube-scheduler" --kubeconfig="$state/admin.kubeconfig" --leader-elect=false \
	--bind-address=127.0.0.1 --secure-port=10259 --profiling=false
cat >kubelet.yaml <<EOK
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false     # this VM is cgroup v1 (hybrid); kubelet >= 1.35 refuses v1 unless told
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$state/containerd.sock
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}, x509: {clientCAFile: $state/pki/ca.crt}}
authorization: {mode: AlwaysAllow}   # only the apiserver authenticates (its client certificate)
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
clusterDomain: cluster.local
clusterDNS: [$podnet.1]
failSwapOn: false
podLogsDir: $data/pod-logs
serializeImagePulls: false
maxPods: 110
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
crashLoopBackOff: {maxContainerRestartPeriod: 1s}
allowedUnsafeSysctls: ["net.core.somaxconn"]
featureGates: {PodLogsQuerySplitStreams: true}   # stdout and stderr apart in pods/log
EOK
kubelet_started=$(($(date +%s) - 1))
start kubelet "$bin/kubelet" --config="$state/kubelet.yaml" --kubeconfig="$state/admin.kubeconfig" \
	--root-dir="$data/kubelet" --node-ip="$node_ip" --hostname-override=$node
start proxy "$bin/kube-proxy" --kubeconfig="$state/admin.kubeconfig" --hostname-override=$node --proxy-mode=iptables \
	--cluster-cidr=$podnet.0/24 --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256 \
	--conntrack-max-per-core=0
cat >Corefile <<EOC
.:53 {
    bind $podnet.1
    errors
    loadbalance
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $state/admin.kubeconfig cornus-admin
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    forward . /etc/resolv.conf
}
EOC
start coredns "$bin/coredns" -conf "$state/Corefile"
# node_ready: Ready, and this kubelet has renewed the node's lease (etcd
# kept the node object of the previous run, Ready then; the Ready
# condition's heartbeat is rewritten only every few minutes).
node_ready() {
	local renew
	admin get node $node -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True || return 1
	renew=$(admin -n kube-node-lease get lease $node -o 'jsonpath={.spec.renewTime}' 2>/dev/null) && [ -n "$renew" ] &&
		[ "$(date -d "$renew" +%s)" -ge "$kubelet_started" ]
}
waitfor "the node" kubelet node_ready
say "node $node Ready"

# --- what an operator provides: the namespace, cornus's service account
# bound to the shipped Role, a default StorageClass.
admin apply -f - >/dev/null <<EOY
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: cornus-hostpath
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOY
(cd "$repo" && go run ./cmd/cornus k8s rbac --namespace "$ns") | admin apply -f - >/dev/null
admin -n "$ns" apply -f - >/dev/null <<EOY
apiVersion: v1
kind: Secret
metadata:
  name: cornus-token
  annotations: {kubernetes.io/service-account.name: cornus}
type: kubernetes.io/service-account-token
EOY
for _ in $(seq 1 120); do
	sa_token=$(admin -n "$ns" get secret cornus-token -o 'jsonpath={.data.token}' 2>/dev/null | base64 -d)
	[ -n "$sa_token" ] && break
	sleep 0.25
done
[ -n "$sa_token" ] || { echo "k8s.sh: no token for service account $ns/cornus" >&2; exit 1; }
kubeconfig cornus "$sa_token" >cornus.kubeconfig.tmp && mv cornus.kubeconfig.tmp cornus.kubeconfig
report
