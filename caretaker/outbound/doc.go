// Package outbound is the caretaker's egress role: it takes a workload's
// outbound TCP connections and carries each where the service's egress
// policy sends it. Proxy mode listens on the workload's loopback as an
// HTTP (CONNECT and absolute-URI) and SOCKS5 proxy on one port;
// transparent mode has nftables redirect the workload's TCP to it and
// reads the original destination back. The redirect skips the caretaker's
// own sockets only: marked (which the app, without CAP_NET_RAW and
// CAP_NET_ADMIN, cannot do) and made in its cgroup (owner_linux.go). The caretaker decides first;
// `cluster` is dialed here, `client` and `gateway` are relayed through
// the server (which decides again), `deny` is refused.
package outbound
