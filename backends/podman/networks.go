package podman

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

func networkPath(name, verb string) string {
	p := "/networks/" + url.PathEscape(name)
	if verb != "" {
		p += "/" + verb
	}
	return p
}

// EnsureNetwork returns the network labelled for (project, key), creating
// it if missing, with DNS on (peers resolve each other by service name and
// alias). External networks must exist. Podman refuses a second network
// of the same name (409), so concurrent creators end up with one.
func (b *Backend) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	name := n.RuntimeName()
	if n.Network.External {
		r, err := b.inspectNetwork(ctx, name)
		if errdefs.IsNotFound(err) {
			return backends.Network{}, fmt.Errorf("network %s is declared external but does not exist; create it first (podman network create %s): %w", name, name, errdefs.ErrNotFound)
		}
		if err != nil {
			return backends.Network{}, err
		}
		return networkOf(r), nil
	}
	b.ensureMu.Lock()
	defer b.ensureMu.Unlock()

	// Found by docker compose's labels (cornus writes both families).
	identity := map[string]string{backends.ComposeProject: n.Project, backends.ComposeNetwork: n.Key}
	if found, err := b.listNetworks(ctx, identity); err != nil {
		return backends.Network{}, fmt.Errorf("ensure network %s: %w", name, err)
	} else if len(found) > 0 {
		return networkOf(oldestNetwork(found)), nil
	}
	body, err := networkCreateBody(name, n, identity)
	if err != nil {
		return backends.Network{}, fmt.Errorf("create network %s: %w", name, err)
	}
	var created networkResource
	// Podman picks a free subnet by listing the host's interfaces and then
	// reading each one's addresses: an interface removed in between (a
	// container or network going away concurrently) fails the create with
	// "no such network interface". That is transient: try again.
	for try := 0; ; try++ {
		err = b.cli.call(ctx, request{method: "POST", path: "/networks/create", body: body}, &created)
		if err == nil || try == 4 || !strings.Contains(err.Error(), "no such network interface") || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(try+1) * 50 * time.Millisecond)
	}
	if errdefs.IsConflict(err) || (err != nil && strings.Contains(err.Error(), "already exists")) {
		// Another process made it first: ours if it has our labels.
		r, ierr := b.inspectNetwork(ctx, name)
		if ierr == nil && backends.MatchLabels(r.Labels, identity) {
			return networkOf(r), nil
		}
		return backends.Network{}, fmt.Errorf("network %s already exists but was not created by cornus for project %s (network key %s); remove it or declare it external: %w",
			name, n.Project, n.Key, errdefs.ErrConflict)
	}
	if err != nil {
		return backends.Network{}, fmt.Errorf("create network %s: %w", name, err)
	}
	return networkOf(created), nil
}

// networkCreateBody is the create request for a project network.
func networkCreateBody(name string, n backends.NetworkSpec, identity map[string]string) (networkResource, error) {
	labels := map[string]string{}
	maps.Copy(labels, n.Network.Labels)
	maps.Copy(labels, n.Labels)
	maps.Copy(labels, identity)
	labels[backends.LabelProject], labels[backends.LabelNetwork] = n.Project, n.Key
	body := networkResource{
		Name: name, Driver: cmp.Or(n.Network.Driver, "bridge"), Labels: labels, Options: maps.Clone(n.Network.DriverOpts),
		Internal: n.Network.Internal, IPv6: n.Network.IPv6, DNSEnabled: true,
	}
	for i, s := range n.Network.Subnets {
		sub, err := subnetOf(s)
		if err != nil {
			return body, invalid("networks.%s.subnets[%d].%v", n.Key, i, err)
		}
		body.Subnets = append(body.Subnets, sub)
	}
	return body, nil
}

// subnetOf maps a subnet; an IP range becomes podman's lease range (its
// first and last usable address).
func subnetOf(s spec.Subnet) (networkSubnet, error) {
	prefix, err := netip.ParsePrefix(s.Subnet)
	if err != nil {
		return networkSubnet{}, fmt.Errorf("subnet: %q is not a CIDR", s.Subnet)
	}
	out := networkSubnet{Subnet: prefix.Masked().String()}
	if s.Gateway != "" {
		gw, err := netip.ParseAddr(s.Gateway)
		if err != nil || !prefix.Contains(gw) {
			return out, fmt.Errorf("gateway: %q is not an address in %s", s.Gateway, s.Subnet)
		}
		out.Gateway = gw.String()
	}
	if s.IPRange != "" {
		r, err := netip.ParsePrefix(s.IPRange)
		if err != nil || !prefix.Contains(r.Masked().Addr()) {
			return out, fmt.Errorf("ipRange: %q is not a CIDR in %s", s.IPRange, s.Subnet)
		}
		first, last := r.Masked().Addr(), lastAddr(r)
		if first == prefix.Masked().Addr() {
			first = first.Next()
		}
		if last == lastAddr(prefix) && prefix.Addr().Is4() {
			last = last.Prev() // the broadcast address
		}
		out.LeaseRange = &struct {
			StartIP string `json:"start_ip,omitempty"`
			EndIP   string `json:"end_ip,omitempty"`
		}{StartIP: first.String(), EndIP: last.String()}
	}
	return out, nil
}

// lastAddr is the highest address of a prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func oldestNetwork(ns []networkResource) networkResource {
	return slices.MinFunc(ns, func(a, b networkResource) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func (b *Backend) inspectNetwork(ctx context.Context, name string) (networkResource, error) {
	var r networkResource
	if err := b.cli.call(ctx, request{method: "GET", path: networkPath(name, "json")}, &r); err != nil {
		return r, fmt.Errorf("inspect network %s: %w", name, err)
	}
	return r, nil
}

func (b *Backend) listNetworks(ctx context.Context, labels map[string]string) ([]networkResource, error) {
	q := url.Values{}
	if len(labels) > 0 {
		q.Set("filters", filters(map[string][]string{"label": labelFilters(labels)}))
	}
	var list []networkResource
	if err := b.cli.call(ctx, request{method: "GET", path: "/networks/json", query: q}, &list); err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	// As for volumes: every label filter must match, whatever podman's
	// version makes of several.
	return slices.DeleteFunc(list, func(n networkResource) bool { return !backends.MatchLabels(n.Labels, labels) }), nil
}

func networkOf(r networkResource) backends.Network {
	out := backends.Network{
		ID: r.ID, Name: r.Name, Driver: r.Driver, Labels: r.Labels, Internal: r.Internal, IPv6: r.IPv6, Created: r.Created,
	}
	for _, s := range r.Subnets {
		sub := spec.Subnet{Subnet: s.Subnet, Gateway: s.Gateway}
		if lr := s.LeaseRange; lr != nil && lr.StartIP != "" {
			sub.IPRange = lr.StartIP + "-" + lr.EndIP
		}
		out.Subnets = append(out.Subnets, sub)
	}
	return out
}

// ListNetworks returns the networks whose labels match.
func (b *Backend) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	list, err := b.listNetworks(ctx, o.Labels)
	if err != nil {
		return nil, err
	}
	out := make([]backends.Network, 0, len(list))
	for _, r := range list {
		out = append(out, networkOf(r))
	}
	slices.SortFunc(out, func(a, b backends.Network) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// nameReport is one entry of podman's network and volume remove answers.
type nameReport struct {
	Name string   `json:"Name"`
	Err  rawError `json:"Err"`
}

// RemoveNetwork deletes a network by ID or name.
func (b *Backend) RemoveNetwork(ctx context.Context, id string) error {
	var reports []nameReport
	if err := b.cli.call(ctx, request{method: "DELETE", path: networkPath(id, "")}, &reports); err != nil {
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	for _, r := range reports {
		if msg := reportError(r.Err); msg != "" {
			return fmt.Errorf("remove network %s: %s: %w", id, msg, classify(500, msg))
		}
	}
	return nil
}

// Connect attaches a running container to a network with aliases.
func (b *Backend) Connect(ctx context.Context, network, container string, aliases []string) error {
	body := struct {
		Container string   `json:"container"`
		Aliases   []string `json:"aliases,omitempty"`
	}{container, aliases}
	if err := b.cli.call(ctx, request{method: "POST", path: networkPath(network, "connect"), body: body}, nil); err != nil {
		return fmt.Errorf("connect container %s to network %s: %w", container, network, err)
	}
	return nil
}

// Disconnect detaches a container from a network.
func (b *Backend) Disconnect(ctx context.Context, network, container string, force bool) error {
	body := struct {
		Container string `json:"container"`
		Force     bool   `json:"force,omitempty"`
	}{container, force}
	if err := b.cli.call(ctx, request{method: "POST", path: networkPath(network, "disconnect"), body: body}, nil); err != nil {
		return fmt.Errorf("disconnect container %s from network %s: %w", container, network, err)
	}
	return nil
}
