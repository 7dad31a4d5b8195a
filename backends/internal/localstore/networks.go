package localstore

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/spec"
)

type networkMeta struct {
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	Created time.Time         `json:"created"`
}

// Networks is a backend's networks: CNI bridges (backends/internal/cni)
// whose labels, which CNI does not keep, are in <metaDir>/<name>.json. A
// network's ID is its name. Its methods are the backends.Networks verbs.
type Networks struct {
	net     *cni.Manager
	metaDir string
	backend string
}

// NewNetworks keeps networks on net with their labels in metaDir; backend
// names the backend in messages. It does no I/O.
func NewNetworks(net *cni.Manager, metaDir, backend string) *Networks {
	return &Networks{net: net, metaDir: metaDir, backend: backend}
}

func (s *Networks) networkMetaPath(name string) string {
	return filepath.Join(s.metaDir, name+".json")
}

// Ensure returns the network, creating it if missing
// (backends.Networks.EnsureNetwork).
func (s *Networks) Ensure(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	name := n.RuntimeName()
	if err := ValidName(name); err != nil {
		return backends.Network{}, err
	}
	if n.Network.External {
		if _, err := s.net.InspectNetwork(ctx, name); err != nil {
			return backends.Network{}, fmt.Errorf("network %s is declared external but does not exist; create it first: %w", name, errdefs.ErrNotFound)
		}
		return s.Inspect(ctx, name)
	}
	if d := n.Network.Driver; d != "" && d != "bridge" {
		return backends.Network{}, fmt.Errorf("network %s: driver %q: the %s backend has bridge networks only: %w", name, d, s.backend, errdefs.ErrNotImplemented)
	}
	opts := cni.NetworkOptions{Name: name, Internal: n.Network.Internal}
	for _, s := range n.Network.Subnets {
		p, err := netip.ParsePrefix(s.Subnet)
		if err != nil {
			return backends.Network{}, fmt.Errorf("network %s: subnet %q: %w", name, s.Subnet, errdefs.ErrInvalidArgument)
		}
		if p.Addr().Is4() {
			opts.Subnet = p
			if s.Gateway != "" {
				opts.Gateway, _ = netip.ParseAddr(s.Gateway)
			}
			break
		}
	}
	if _, err := s.net.EnsureNetwork(ctx, opts); err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
	}
	if _, err := os.Stat(s.networkMetaPath(name)); os.IsNotExist(err) {
		labels := map[string]string{}
		maps.Copy(labels, n.Network.Labels)
		maps.Copy(labels, n.Labels)
		if n.Project != "" {
			labels[backends.ComposeProject], labels[backends.ComposeNetwork] = n.Project, n.Key
			labels[backends.LabelProject], labels[backends.LabelNetwork] = n.Project, n.Key
		}
		if err := WriteJSON(s.networkMetaPath(name), networkMeta{Name: name, Labels: labels, Created: time.Now().UTC()}); err != nil {
			return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
		}
	}
	return s.Inspect(ctx, name)
}

// Inspect is the network named so, with the containers on it.
func (s *Networks) Inspect(ctx context.Context, name string) (backends.Network, error) {
	n, err := s.net.InspectNetwork(ctx, name)
	if err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
	}
	var meta networkMeta
	_ = ReadJSON(s.networkMetaPath(name), &meta)
	out := backends.Network{ID: name, Name: name, Driver: "bridge", Labels: meta.Labels, Internal: n.Internal, Created: meta.Created,
		Subnets:    []spec.Subnet{{Subnet: n.Subnet.String(), Gateway: n.Gateway.String()}},
		Containers: map[string]backends.EndpointInfo{}}
	cs, err := s.net.ListContainers(ctx)
	if err != nil {
		return out, err
	}
	for _, c := range cs {
		for _, a := range c.Attachments {
			if a.Network == name && a.IP.IsValid() {
				out.Containers[c.ID] = backends.EndpointInfo{NetworkID: name, IPAddress: a.IP.String(), IPPrefixLen: a.PrefixLen,
					Gateway: a.Gateway.String(), MacAddress: a.MAC, Aliases: a.Aliases}
			}
		}
	}
	return out, nil
}

// List lists networks whose labels match (backends.Networks.ListNetworks).
func (s *Networks) List(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	ns, err := s.net.ListNetworks(ctx)
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	var out []backends.Network
	for _, n := range ns {
		nw, err := s.Inspect(ctx, n.Name)
		if err != nil || !backends.MatchLabels(nw.Labels, o.Labels) {
			continue
		}
		out = append(out, nw)
	}
	return out, nil
}

// Remove removes a network no container is on
// (backends.Networks.RemoveNetwork).
func (s *Networks) Remove(ctx context.Context, id string) error {
	if err := s.net.RemoveNetwork(ctx, id); err != nil {
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	if err := os.Remove(s.networkMetaPath(id)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	return nil
}
