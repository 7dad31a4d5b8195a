package prepare

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/spec"
)

// NetworkInput is the container Network prepares for.
type NetworkInput struct {
	ID       string
	Dir      string // the container's directory: hosts and resolv.conf go there
	Spec     backends.ContainerSpec
	Hostname string
	// Peer resolves networkMode container:<ref> to that container's
	// network namespace and directory.
	Peer func(ctx context.Context, ref string) (netns, dir string, err error)
}

// NetworkResult is what Network set up: the namespace (for the spec and
// container.json), the hosts and resolv.conf to bind-mount ("" for none),
// and the attachments with their published ports (nil for none of our own).
type NetworkResult struct {
	Netns      string
	HostsPath  string
	ResolvConf string
	Networks   map[string]backends.EndpointInfo
	Ports      []backends.PortBinding
}

// Network gives the container its network namespace: its own,
// attached to its networks (ports on replica 1 only: one publisher), or
// none of its own (host), or another container's.
func (h Host) Network(ctx context.Context, in NetworkInput, undo *[]func()) (NetworkResult, error) {
	cs, dir := in.Spec, in.Dir
	var st NetworkResult
	st.ResolvConf = filepath.Join(dir, "resolv.conf")
	switch cs.Network.Kind {
	case "host":
		st.ResolvConf, st.HostsPath = "", ""
		return st, nil
	case "container":
		netns, otherDir, err := in.Peer(ctx, cs.Network.Container)
		if err != nil || netns == "" {
			return NetworkResult{}, fmt.Errorf("networkMode container:%s: no such container with a network namespace: %w", cs.Network.Container, errdefs.ErrNotFound)
		}
		st.Netns, st.HostsPath = netns, filepath.Join(otherDir, "hosts")
		st.ResolvConf = filepath.Join(otherDir, "resolv.conf")
		return st, nil
	}
	netns, err := h.CNI.CreateNetns(ctx, in.ID)
	if err != nil {
		return NetworkResult{}, err
	}
	*undo = append(*undo, func() { _ = h.CNI.RemoveNetns(context.Background(), in.ID) })
	st.Netns = netns
	st.HostsPath = filepath.Join(dir, "hosts")
	var extra []cni.HostEntry
	for _, e := range cs.ExtraHosts {
		if ip, err := netip.ParseAddr(e.IP); err == nil {
			extra = append(extra, cni.HostEntry{Name: e.Host, IP: ip})
		}
	}
	if cs.Network.Kind == "none" {
		return st, writeHostsAlone(st.HostsPath, in.Hostname, extra, st.ResolvConf, cs)
	}
	atts := cs.Networks
	if len(atts) == 0 {
		if _, err := h.Networks.Ensure(ctx, backends.NetworkSpec{Network: backendsNetwork(defaultNetwork)}); err != nil {
			return NetworkResult{}, err
		}
		atts = []backends.NetworkAttachment{{Network: defaultNetwork}}
	}
	ao := cni.AttachOptions{ContainerID: in.ID, Netns: netns, Hostname: in.Hostname, Names: []string{cs.Name}, HostsPath: st.HostsPath, ExtraHosts: extra}
	for _, a := range atts {
		ep := cni.Endpoint{Network: a.Network, Aliases: a.Aliases}
		if a.IPv4 != "" {
			ep.IPv4, _ = netip.ParseAddr(a.IPv4)
		}
		ao.Networks = append(ao.Networks, ep)
	}
	if cs.Replica <= 1 {
		ports, err := portMappings(cs.Ports, h.Backend)
		if err != nil {
			return NetworkResult{}, err
		}
		ao.Ports = ports
	}
	res, err := h.CNI.Attach(ctx, ao)
	if err != nil {
		return NetworkResult{}, err
	}
	*undo = append(*undo, func() { _, _ = h.CNI.Detach(context.Background(), cni.DetachOptions{ContainerID: in.ID, Netns: netns}) })
	st.Networks = map[string]backends.EndpointInfo{}
	for i, att := range res.Attachments {
		st.Networks[att.Network] = backends.EndpointInfo{IPAddress: att.IP.String(), IPPrefixLen: att.PrefixLen, Gateway: att.Gateway.String(),
			MacAddress: att.MAC, Aliases: att.Aliases, NetworkID: att.Network}
		for _, p := range att.Ports {
			st.Ports = append(st.Ports, backends.PortBinding{HostIP: hostIP(p.HostIP), HostPort: int(p.HostPort), ContainerPort: int(p.ContainerPort), Protocol: p.Protocol})
		}
		if i == 0 {
			if err := writeResolvConf(st.ResolvConf, cs, att.Gateway.String()); err != nil {
				return NetworkResult{}, err
			}
		}
	}
	return st, nil
}

// portMappings publishes fixed host ports; a range takes its first port
// and port 0 one the CNI manager picks (cni.PortMapping).
func portMappings(ps []backends.PortMapping, backend string) ([]cni.PortMapping, error) {
	var out []cni.PortMapping
	for _, p := range ps {
		m := cni.PortMapping{HostPort: uint16(p.HostPort), ContainerPort: uint16(p.ContainerPort), Protocol: p.Protocol}
		if p.HostIP != "" {
			ip, err := netip.ParseAddr(p.HostIP)
			if err != nil {
				return nil, fmt.Errorf("ports: host IP %q: %w", p.HostIP, errdefs.ErrInvalidArgument)
			}
			m.HostIP = ip
		}
		if p.Protocol == "sctp" {
			return nil, fmt.Errorf("ports: sctp is not supported by the %s backend: %w", backend, errdefs.ErrNotImplemented)
		}
		out = append(out, m)
	}
	return out, nil
}

func hostIP(a netip.Addr) string {
	if !a.IsValid() || a.IsUnspecified() {
		return "0.0.0.0"
	}
	return a.String()
}

// writeResolvConf points the container at the resolver on its first
// network's gateway (names of peers, then upstream), or at its own DNS.
func writeResolvConf(path string, cs backends.ContainerSpec, gateway string) error {
	var b strings.Builder
	servers := cs.DNS
	if len(servers) == 0 {
		servers = []string{gateway}
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(cs.DNSSearch) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(cs.DNSSearch, " "))
	}
	if len(cs.DNSOptions) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(cs.DNSOptions, " "))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeHostsAlone writes the hosts file and resolv.conf of a container on
// no network.
func writeHostsAlone(hosts, hostname string, extra []cni.HostEntry, resolv string, cs backends.ContainerSpec) error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "127.0.1.1\t%s\n", hostname)
	for _, h := range extra {
		fmt.Fprintf(&b, "%s\t%s\n", h.IP, h.Name)
	}
	if err := os.WriteFile(hosts, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return writeResolvConf(resolv, cs, "127.0.0.1")
}

// backendsNetwork is a network known by runtime name only.
func backendsNetwork(name string) spec.Network { return spec.Network{Name: name} }
