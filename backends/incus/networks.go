package incus

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/spec"
)

// Project networks are Incus managed bridges named by bridgeName, with an
// explicit IPv4 subnet (a /24 of CORNUS_INCUS_SUBNET_BASE unless the spec
// gives one; Incus's own subnet detection fails on hosts like ours) and
// cornus's identity in user.cornus.* keys. Containers get static
// addresses on them (apps run no DHCP client).
const (
	netKeyName    = "user.cornus.name"
	netKeyLabels  = "user.cornus.labels"
	netKeyProject = "user.cornus.project"
)

// maxNICs bounds a container's networks (LXC numbers interfaces in device
// order; cornus names them eth0..eth9).
const maxNICs = 10

func networkPath(name string) string { return "/1.0/networks/" + url.PathEscape(name) }

// EnsureNetwork returns the project network, creating it if missing.
// External networks must exist: a cornus network of that name, or an
// Incus network named so.
func (b *Backend) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	runtime := n.RuntimeName()
	bridge := bridgeName(b.cfg.project, runtime)
	if net, err := b.getNetwork(ctx, bridge); err == nil {
		return net, nil
	} else if !errdefs.IsNotFound(err) {
		return backends.Network{}, err
	}
	if n.Network.External {
		if net, err := b.getNetwork(ctx, runtime); err == nil {
			return net, nil
		}
		return backends.Network{}, fmt.Errorf("network %s is declared external but does not exist; create it first: %w", runtime, errdefs.ErrNotFound)
	}
	if d := n.Network.Driver; d != "" && d != "bridge" {
		return backends.Network{}, fmt.Errorf("network %s: driver %q: the incus backend makes bridges only: %w", runtime, d, errdefs.ErrNotImplemented)
	}
	unlock, err := b.lock("networks")
	if err != nil {
		return backends.Network{}, err
	}
	defer unlock()
	if net, err := b.getNetwork(ctx, bridge); err == nil {
		return net, nil
	}
	gw, err := b.pickSubnet(ctx, n.Network.Subnets)
	if err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", runtime, err)
	}
	labels := map[string]string{}
	maps.Copy(labels, n.Network.Labels)
	maps.Copy(labels, n.Labels)
	if n.Project != "" {
		labels[backends.ComposeProject], labels[backends.ComposeNetwork] = n.Project, n.Key
		labels[backends.LabelProject], labels[backends.LabelNetwork] = n.Project, n.Key
	}
	data, _ := json.Marshal(labels)
	cfg := map[string]string{
		"ipv4.address": gw.String(), "ipv4.nat": fmt.Sprint(!n.Network.Internal), "ipv6.address": "none",
		netKeyName: runtime, netKeyLabels: string(data), netKeyProject: n.Project,
	}
	// dnsmasq only watches a hosts directory that exists when it starts.
	if err := os.MkdirAll(b.dnsHostsDir(bridge), 0o755); err != nil {
		return backends.Network{}, fmt.Errorf("network %s: dns hosts directory: %w", runtime, err)
	}
	cfg["raw.dnsmasq"] = "hostsdir=" + b.dnsHostsDir(bridge) + "\n"
	body := network{Name: bridge, Type: "bridge", Description: "cornus " + runtime, Config: cfg}
	err = retryVanished(ctx, func() error {
		err := b.cli.call(ctx, request{method: "POST", path: "/1.0/networks", body: body}, nil)
		if err != nil && vanished(err) {
			// Undo the half-made bridge before the next try.
			_ = retryVanished(ctx, func() error {
				return b.cli.call(ctx, request{method: "DELETE", path: networkPath(bridge)}, nil)
			})
		}
		return err
	})
	if err == nil {
		return b.getNetwork(ctx, bridge)
	}
	// A conflict is "it exists" only when it does: dnsmasq's "address
	// already in use" is classed a conflict too, and Incus has undone that
	// bridge.
	if errdefs.IsConflict(err) {
		if net, gerr := b.getNetwork(ctx, bridge); gerr == nil {
			return net, nil
		}
	}
	return backends.Network{}, fmt.Errorf("create network %s (incus bridge %s, %s): %w", runtime, bridge, gw, err)
}

// vanished reports a bridge that failed to start or stop because a host
// interface vanished while something walked them all: incusd 6.0 lists
// every interface, then asks `ip link show` about each, and fails on one
// gone by then; the bridge's dnsmasq does the same at its start and exits
// with "failed to find list of interfaces: No such device". Other
// runtimes' veths and bridges (and the veths of containers just stopped)
// come and go all the time, so it is retried.
func vanished(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Failed to delete bridge children interfaces") ||
		(strings.Contains(msg, "ip -d -j link show") && (strings.Contains(msg, "does not exist") || strings.Contains(msg, "No such device"))) ||
		strings.Contains(msg, "failed to find list of interfaces")
}

// retryVanished runs fn until it succeeds, fails otherwise than
// vanished, or has failed so for 90 seconds: on a host where other
// runtimes' tests start and stop containers at once, interfaces came
// and went under every try for 30 seconds straight (CI37).
func retryVanished(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(90 * time.Second)
	delay := 50 * time.Millisecond
	for {
		err := fn()
		if err == nil || !vanished(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

// pickSubnet returns the gateway address (with prefix) of the subnet a
// new network gets: the spec's, else the first /24 of the subnet base no
// Incus network uses (the base's first /24 is the default network's).
func (b *Backend) pickSubnet(ctx context.Context, subnets []spec.Subnet) (netip.Prefix, error) {
	if len(subnets) > 0 {
		pfx, err := netip.ParsePrefix(subnets[0].Subnet)
		if err != nil || !pfx.Addr().Is4() {
			return netip.Prefix{}, fmt.Errorf("subnet %q: want an IPv4 CIDR: %w", subnets[0].Subnet, errdefs.ErrInvalidArgument)
		}
		gw := pfx.Masked().Addr().Next()
		if subnets[0].Gateway != "" {
			if gw, err = netip.ParseAddr(subnets[0].Gateway); err != nil {
				return netip.Prefix{}, fmt.Errorf("gateway %q: %w", subnets[0].Gateway, errdefs.ErrInvalidArgument)
			}
		}
		return netip.PrefixFrom(gw, pfx.Bits()), nil
	}
	base, err := netip.ParsePrefix(b.cfg.subnetBase)
	if err != nil || !base.Addr().Is4() || base.Bits() > 23 {
		return netip.Prefix{}, fmt.Errorf("%s=%q: want an IPv4 CIDR of /23 or wider: %w", EnvSubnetBase, b.cfg.subnetBase, errdefs.ErrInvalidArgument)
	}
	var nets []network
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/networks", query: url.Values{"recursion": {"1"}}, noProject: true}, &nets); err != nil {
		return netip.Prefix{}, fmt.Errorf("list networks: %w", err)
	}
	var used []netip.Prefix
	for _, n := range nets {
		if p, err := netip.ParsePrefix(n.Config["ipv4.address"]); err == nil {
			used = append(used, p.Masked())
		}
	}
	// Interfaces Incus does not manage (docker's, CNI's, a bridge a failed
	// create left with its dnsmasq) hold addresses too, and Incus lists
	// them without config: a subnet one of them uses makes the new
	// bridge's dnsmasq fail with "address already in use". incusd is on
	// this host (a local socket), so its addresses are the host's.
	used = append(used, cni.HostPrefixes()...)
	start := base.Masked().Addr().As4()
	count := 1 << (24 - base.Bits())
	for i := 1; i < count; i++ {
		v := binary.BigEndian.Uint32(start[:]) + uint32(i)<<8
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], v)
		cand := netip.PrefixFrom(netip.AddrFrom4(a), 24)
		free := true
		for _, u := range used {
			if u.Overlaps(cand) {
				free = false
				break
			}
		}
		if free {
			return netip.PrefixFrom(cand.Addr().Next(), 24), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("every /24 of %s is taken (set %s to a wider or other range): %w", b.cfg.subnetBase, EnvSubnetBase, errdefs.ErrResourceExhausted)
}

func (b *Backend) getNetwork(ctx context.Context, name string) (backends.Network, error) {
	var n network
	if err := b.cli.call(ctx, request{method: "GET", path: networkPath(name)}, &n); err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
	}
	return networkOf(n), nil
}

func networkOf(n network) backends.Network {
	out := backends.Network{ID: n.Name, Name: cmpOr(n.Config[netKeyName], n.Name), Driver: "bridge", Internal: n.Config["ipv4.nat"] == "false"}
	_ = json.Unmarshal([]byte(n.Config[netKeyLabels]), &out.Labels)
	if p, err := netip.ParsePrefix(n.Config["ipv4.address"]); err == nil {
		out.Subnets = []spec.Subnet{{Subnet: p.Masked().String(), Gateway: p.Addr().String()}}
	}
	return out
}

// ListNetworks lists the networks cornus made whose labels match.
func (b *Backend) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	var nets []network
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/networks", query: url.Values{"recursion": {"1"}}}, &nets); err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	var out []backends.Network
	for _, n := range nets {
		if n.Config[netKeyName] == "" {
			continue
		}
		net := networkOf(n)
		if backends.MatchLabels(net.Labels, o.Labels) {
			out = append(out, net)
		}
	}
	return out, nil
}

// RemoveNetwork removes a network cornus made, by its Incus name or its
// runtime name.
func (b *Backend) RemoveNetwork(ctx context.Context, id string) error {
	name := id
	if _, err := b.getNetwork(ctx, name); errdefs.IsNotFound(err) {
		name = bridgeName(b.cfg.project, id)
	}
	net, err := b.getNetwork(ctx, name)
	if err != nil {
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	if net.Labels == nil && net.Name == name {
		return fmt.Errorf("remove network %s: not a network cornus made: %w", id, errdefs.ErrFailedPrecondition)
	}
	err = retryVanished(ctx, func() error {
		return b.cli.call(ctx, request{method: "DELETE", path: networkPath(name)}, nil)
	})
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "in use") {
			return fmt.Errorf("remove network %s: it has containers: %v: %w", id, err, errdefs.ErrConflict)
		}
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	_ = os.RemoveAll(b.dnsHostsDir(name))
	return nil
}

// planNICs gives the container an address on each of its networks (the
// default network when it names none), the spec's or the first free one.
func (b *Backend) planNICs(ctx context.Context, cs backends.ContainerSpec) ([]nicPlan, error) {
	if cs.Network.Kind == "none" {
		return nil, nil
	}
	atts := cs.Networks
	if len(atts) == 0 {
		atts = []backends.NetworkAttachment{{Network: b.cfg.network, Aliases: []string{cs.App}}}
	}
	if len(atts) > maxNICs {
		return nil, fmt.Errorf("networks: %d networks, the incus backend joins at most %d: %w", len(atts), maxNICs, errdefs.ErrInvalidArgument)
	}
	used, err := b.usedAddresses(ctx)
	if err != nil {
		return nil, err
	}
	var out []nicPlan
	for i, a := range atts {
		bridge := bridgeName(b.cfg.project, a.Network)
		var n network
		err := b.cli.call(ctx, request{method: "GET", path: networkPath(bridge)}, &n)
		if errdefs.IsNotFound(err) { // the default network, or an Incus network by its own name
			bridge = a.Network
			err = b.cli.call(ctx, request{method: "GET", path: networkPath(bridge)}, &n)
		}
		if err != nil {
			return nil, fmt.Errorf("networks[%d] %s: %w", i, a.Network, err)
		}
		// Best effort: /etc/hosts resolves service names without it, only
		// DNS queries (nslookup) would miss them.
		_ = b.ensureDNS(ctx, bridge, n)
		gw, err := netip.ParsePrefix(n.Config["ipv4.address"])
		if err != nil {
			return nil, fmt.Errorf("networks[%d] %s: incus network %s has no IPv4 subnet (ipv4.address %q): %w", i, a.Network, bridge, n.Config["ipv4.address"], errdefs.ErrFailedPrecondition)
		}
		ip := a.IPv4
		if ip == "" {
			if ip, err = freeAddress(gw, used[bridge]); err != nil {
				return nil, fmt.Errorf("networks[%d] %s: %w", i, a.Network, err)
			}
		}
		used[bridge] = append(used[bridge], ip)
		out = append(out, nicPlan{Bridge: bridge, Network: a.Network, IP: ip, Prefix: gw.Bits(), Gateway: gw.Addr().String(), Aliases: a.Aliases})
	}
	return out, nil
}

// usedAddresses maps each network to the static addresses its instances
// hold.
func (b *Backend) usedAddresses(ctx context.Context) (map[string][]string, error) {
	insts, err := b.listInstances(ctx)
	if err != nil {
		return nil, err
	}
	used := map[string][]string{}
	for _, in := range insts {
		for _, d := range in.ExpandedDevices {
			if d["type"] == "nic" && d["ipv4.address"] != "" {
				used[d["network"]] = append(used[d["network"]], d["ipv4.address"])
			}
		}
	}
	return used, nil
}

// freeAddress is the first host address of the subnet that is neither
// the gateway nor used.
func freeAddress(gw netip.Prefix, used []string) (string, error) {
	taken := map[string]bool{gw.Addr().String(): true}
	for _, u := range used {
		taken[u] = true
	}
	pfx := gw.Masked()
	for a := pfx.Addr().Next(); pfx.Contains(a); a = a.Next() {
		if !pfx.Contains(a.Next()) { // the broadcast address
			break
		}
		if !taken[a.String()] {
			return a.String(), nil
		}
	}
	return "", fmt.Errorf("no free address left in %s: %w", pfx, errdefs.ErrResourceExhausted)
}
