// Package outbound is the caretaker's egress role: it takes a workload's
// outbound TCP connections and carries each where the service's egress
// policy sends it. Proxy mode listens on the workload's loopback as an
// HTTP (CONNECT and absolute-URI) and SOCKS5 proxy on one port;
// transparent mode has nftables redirect the workload's TCP to it and
// reads the original destination back. The caretaker decides first;
// `cluster` is dialed here, `client` and `gateway` are relayed through
// the server (which decides again), `deny` is refused.
package outbound
