// Package cni gives daemonless backends (containerd, bare runc) container
// networking: one bridge per cornus network, a pinned network namespace per
// container, CNI ADD/DEL through libcni with Debian's standard plugins
// (bridge + host-local IPAM, portmap), hosts files, and a DNS resolver on
// each network's gateway.
//
// Entry points:
//   - New(dataDir, WithEnv(env), ...) returns a Manager; options do no I/O.
//     Check reports missing plugins or iptables with what to install.
//   - Networks: EnsureNetwork (allocates a /24 from CORNUS_CNI_SUBNET_BASE,
//     default 10.4, persisted in <dataDir>/cni/networks.json),
//     InspectNetwork, ListNetworks, RemoveNetwork.
//   - Namespaces: CreateNetns, RemoveNetns, ListNetns (pins under
//     <dataDir>/netns/<id>), and Do to run code inside a namespace.
//   - Containers: Attach (CNI ADD per network, eth0, eth1, …; published
//     ports on the first network), Detach (CNI DEL, idempotent, works when
//     the namespace is gone), ListContainers, HostsFile.
//   - Names: every change rewrites the hosts files of the containers that
//     share a network with the changed one; NewResolver returns a Resolver
//     (Start, Close) serving the same records over DNS on a gateway.
//
// State lives under the data dir the caller gives, never /var/lib/cni:
// cni/networks.json and cni/containers.json (JSON written by rename under
// the flock on cni/lock, so several processes agree), cni/cache (libcni's
// result cache, the source of truth for DEL), cni/ipam/<network>
// (host-local leases) and netns/<id>.
//
// Firewall: the bridge plugin runs with ipMasq off because its masquerade
// rules are per container and are only removed when DEL still finds the
// namespace (plugins 1.1.1), which leaks a chain per container after a host
// crash. Instead this package keeps per-network rules in its own chains
// CORNUS-FORWARD (filter: traffic within a network, replies, published
// ports, outbound unless internal; then drop anything else touching a cn-
// bridge, which isolates networks from each other even where FORWARD
// accepts by default), CORNUS-POSTROUTING (nat: masquerade per subnet)
// and CORNUS-INPUT (drops packets for 127.0.0.0/8 arriving from a bridge:
// portmap's route_localnet would otherwise expose the host's loopback-only
// services to containers). The jumps are appended to FORWARD and
// POSTROUTING and put first in INPUT; no other chain is touched. The
// chains are host-global, so they go with the last network of any data
// dir, decided under the flock /run/lock/cornus-cni-firewall.lock.
// portmap's shared CNI-HOSTPORT-* chains stay, empty, once their last port
// is gone, as with every CNI runtime.
//
// Names: the Resolver answers A queries (NODATA for other types of a known
// name, NXDOMAIN for unknown single-label names) scoped to the networks of
// the asking container, and forwards everything else as raw bytes to the
// caller's upstreams (SERVFAIL without any). Its wire code is a minimal
// hand-written codec (dnsmsg.go, fuzzed) rather than a DNS library: it
// only ever parses one question and writes A records. It binds with
// IP_FREEBIND, so it may start before the bridge has its gateway address.
//
// Crash recovery: Attach records an attachment as pending before its ADD,
// so a process that dies midway leaves a record Detach cleans up (and a
// second Attach to that network is a Conflict until then). After a reboot
// ListNetns reports pins that are no longer live and ListContainers what
// the store still holds; the backend detaches or re-creates them.
//
// Environment comes from the caller (WithEnv); this package never reads
// os.Getenv. Keys: CORNUS_CNI_BIN_DIR and CNI_PATH (plugin dirs, searched
// before /opt/cni/bin and /usr/lib/cni), CORNUS_CNI_SUBNET_BASE, PATH (to
// find iptables). The plugins themselves inherit the process environment
// through libcni.
//
// This package must not import any backend (backends/<name>), the engine or
// the CLI; backends import it.
package cni
