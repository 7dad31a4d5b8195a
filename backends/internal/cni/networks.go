package cni

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
)

// Network is a cornus network as this package runs it: one Linux bridge,
// one IPv4 subnet with the gateway on the bridge.
type Network struct {
	Name     string       `json:"name"`
	Subnet   netip.Prefix `json:"subnet"`
	Gateway  netip.Addr   `json:"gateway"`
	Bridge   string       `json:"bridge"`
	Internal bool         `json:"internal,omitempty"`
}

// NetworkOptions describe a network to ensure.
type NetworkOptions struct {
	// Name is the runtime name (e.g. "shop_default").
	Name string
	// Subnet, when set, is honored (Compose ipam.config.subnet); otherwise a
	// free /24 is carved from the subnet base.
	Subnet netip.Prefix
	// Gateway, when set, must be a host address of Subnet; default: its
	// first host (.1).
	Gateway netip.Addr
	// Internal networks get no outbound route, masquerade or forwarding.
	Internal bool
}

// networksFile is cni/networks.json.
type networksFile struct {
	Networks map[string]Network `json:"networks"`
}

func (m *Manager) loadNetworks() (networksFile, error) {
	f := networksFile{Networks: map[string]Network{}}
	if err := readJSON(m.networksPath(), &f); err != nil {
		return f, err
	}
	if f.Networks == nil {
		f.Networks = map[string]Network{}
	}
	return f, nil
}

// EnsureNetwork returns the network called opts.Name, creating its record
// and firewall rules if needed. A network keeps its subnet for life; asking
// for a different subnet or internal flag is an errdefs Conflict. The bridge
// itself appears with the first Attach.
func (m *Manager) EnsureNetwork(ctx context.Context, opts NetworkOptions) (Network, error) {
	n, err := m.ensureNetwork(ctx, opts)
	if err != nil {
		return Network{}, fmt.Errorf("ensure network %s: %w", opts.Name, err)
	}
	return n, nil
}

func (m *Manager) ensureNetwork(ctx context.Context, opts NetworkOptions) (Network, error) {
	if err := validID("network name", opts.Name); err != nil {
		return Network{}, err
	}
	if opts.Subnet.IsValid() {
		if err := checkSubnet(opts.Subnet); err != nil {
			return Network{}, err
		}
	}
	if opts.Gateway.IsValid() && (!opts.Subnet.IsValid() || !usableHost(opts.Subnet, opts.Gateway)) {
		return Network{}, fmt.Errorf("gateway %s: must be a host address of the given subnet %s: %w",
			opts.Gateway, opts.Subnet, errdefs.ErrInvalidArgument)
	}
	ipt, err := m.iptables()
	if err != nil {
		return Network{}, err
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return Network{}, err
	}
	defer unlock()
	nf, err := m.loadNetworks()
	if err != nil {
		return Network{}, err
	}
	if n, ok := nf.Networks[opts.Name]; ok {
		if opts.Subnet.IsValid() && opts.Subnet != n.Subnet || opts.Gateway.IsValid() && opts.Gateway != n.Gateway {
			return Network{}, fmt.Errorf("exists with subnet %s gateway %s, not %s %s: remove it first: %w",
				n.Subnet, n.Gateway, opts.Subnet, opts.Gateway, errdefs.ErrConflict)
		}
		if opts.Internal != n.Internal {
			return Network{}, fmt.Errorf("exists with internal=%t: remove it first: %w", n.Internal, errdefs.ErrConflict)
		}
		// Rules vanish with a reboot; the quick check keeps a repeated
		// EnsureNetwork (every "up") cheap.
		if ok, err := ipt.firewallPresent(ctx, n); err != nil || ok {
			return n, err
		}
		return n, ipt.ensureFirewall(ctx, n)
	}
	n := Network{Name: opts.Name, Subnet: opts.Subnet, Gateway: opts.Gateway, Bridge: bridgeName(m.dataDir, opts.Name), Internal: opts.Internal}
	var taken []netip.Prefix
	for _, o := range nf.Networks {
		if o.Bridge == n.Bridge {
			return Network{}, fmt.Errorf("bridge name %s collides with network %s: rename one: %w", n.Bridge, o.Name, errdefs.ErrConflict)
		}
		if n.Subnet.IsValid() && o.Subnet.Overlaps(n.Subnet) {
			return Network{}, fmt.Errorf("subnet %s overlaps network %s (%s): %w", n.Subnet, o.Name, o.Subnet, errdefs.ErrConflict)
		}
		taken = append(taken, o.Subnet)
	}
	if !n.Subnet.IsValid() {
		if n.Subnet, err = allocateSubnet(m.base, append(taken, HostPrefixes()...)); err != nil {
			return Network{}, err
		}
	}
	if !n.Gateway.IsValid() {
		n.Gateway = n.Subnet.Addr().Next()
	}
	if err := ipt.ensureFirewall(ctx, n); err != nil {
		return Network{}, err
	}
	nf.Networks[n.Name] = n
	if err := writeJSON(m.networksPath(), nf); err != nil {
		return Network{}, errors.Join(err, ipt.removeFirewall(ctx, n))
	}
	return n, nil
}

// HostPrefixes are the IPv4 subnets of the host's addresses, which a new
// network must not overlap (the incus backend's bridges too). Unreadable
// interfaces only weaken the check.
func HostPrefixes() []netip.Prefix {
	addrs, _ := net.InterfaceAddrs()
	var ps []netip.Prefix
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if p, err := netip.ParsePrefix(ipn.String()); err == nil && p.Addr().Is4() {
				ps = append(ps, p.Masked())
			}
		}
	}
	return ps
}

// InspectNetwork returns the network called name, or an errdefs NotFound.
func (m *Manager) InspectNetwork(_ context.Context, name string) (Network, error) {
	nf, err := m.loadNetworks()
	if err != nil {
		return Network{}, fmt.Errorf("inspect network %s: %w", name, err)
	}
	n, ok := nf.Networks[name]
	if !ok {
		return Network{}, fmt.Errorf("network %s: %w", name, errdefs.ErrNotFound)
	}
	return n, nil
}

// ListNetworks returns every network, sorted by name.
func (m *Manager) ListNetworks(_ context.Context) ([]Network, error) {
	nf, err := m.loadNetworks()
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	var out []Network
	for _, k := range slices.Sorted(maps.Keys(nf.Networks)) {
		out = append(out, nf.Networks[k])
	}
	return out, nil
}

// RemoveNetwork deletes a network's bridge, firewall rules, IPAM leases and
// record. It is an errdefs Conflict while a container is attached, and a
// no-op (bar deleting a leftover bridge) for an unknown network.
func (m *Manager) RemoveNetwork(ctx context.Context, name string) error {
	if err := m.removeNetwork(ctx, name); err != nil {
		return fmt.Errorf("remove network %s: %w", name, err)
	}
	return nil
}

func (m *Manager) removeNetwork(ctx context.Context, name string) error {
	if err := validID("network name", name); err != nil {
		return err
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cf, err := m.loadContainers()
	if err != nil {
		return err
	}
	var users []string
	for _, c := range cf.Containers {
		if c.attachment(name) != nil {
			users = append(users, c.ID)
		}
	}
	if atts, err := m.cniConfig().GetCachedAttachments(""); err == nil {
		for _, a := range atts {
			if a.Network == name && !slices.Contains(users, a.ContainerID) {
				users = append(users, a.ContainerID)
			}
		}
	}
	if len(users) > 0 {
		slices.Sort(users)
		return fmt.Errorf("still attached: %s: detach them first: %w", strings.Join(users, ", "), errdefs.ErrConflict)
	}
	nf, err := m.loadNetworks()
	if err != nil {
		return err
	}
	n, known := nf.Networks[name]
	if !known {
		n = Network{Name: name, Bridge: bridgeName(m.dataDir, name)}
	}
	if err := deleteLink(n.Bridge); err != nil {
		return fmt.Errorf("delete bridge %s: %w", n.Bridge, err)
	}
	if known {
		ipt, err := m.iptables()
		if err != nil {
			return err
		}
		if err := ipt.removeFirewall(ctx, n); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(filepath.Join(m.ipamDir(), name)); err != nil {
		return fmt.Errorf("remove IPAM state: %w", err)
	}
	if !known {
		return nil
	}
	delete(nf.Networks, name)
	return writeJSON(m.networksPath(), nf)
}
