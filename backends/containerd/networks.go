package containerd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/journal"
	"github.com/cornus-dev/cornus/spec"
)

// Networks are CNI bridges (backends/internal/cni); their labels, which CNI
// does not keep, are in <data>/networks/<name>.json. A network's ID is its
// name.

type networkMeta struct {
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	Created time.Time         `json:"created"`
}

func (b *Backend) networkMetaPath(name string) string {
	return filepath.Join(b.cfg.dataDir, "networks", name+".json")
}

// EnsureNetwork returns the network, creating it if missing.
func (b *Backend) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	name := n.Network.Name
	if name == "" {
		name = n.Project + "_" + n.Key
	}
	if err := validName(name); err != nil {
		return backends.Network{}, err
	}
	if n.Network.External {
		if _, err := b.net.InspectNetwork(ctx, name); err != nil {
			return backends.Network{}, fmt.Errorf("network %s is declared external but does not exist; create it first: %w", name, errdefs.ErrNotFound)
		}
		return b.networkOf(ctx, name)
	}
	if d := n.Network.Driver; d != "" && d != "bridge" {
		return backends.Network{}, fmt.Errorf("network %s: driver %q: the containerd backend has bridge networks only: %w", name, d, errdefs.ErrNotImplemented)
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
	if _, err := b.net.EnsureNetwork(ctx, opts); err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
	}
	if _, err := os.Stat(b.networkMetaPath(name)); os.IsNotExist(err) {
		labels := map[string]string{}
		maps.Copy(labels, n.Network.Labels)
		maps.Copy(labels, n.Labels)
		if n.Project != "" {
			labels[backends.ComposeProject], labels[backends.ComposeNetwork] = n.Project, n.Key
			labels[backends.LabelProject], labels[backends.LabelNetwork] = n.Project, n.Key
		}
		if err := writeJSON(b.networkMetaPath(name), networkMeta{Name: name, Labels: labels, Created: time.Now().UTC()}); err != nil {
			return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
		}
	}
	return b.networkOf(ctx, name)
}

func (b *Backend) networkOf(ctx context.Context, name string) (backends.Network, error) {
	n, err := b.net.InspectNetwork(ctx, name)
	if err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
	}
	var meta networkMeta
	_ = readJSON(b.networkMetaPath(name), &meta)
	out := backends.Network{ID: name, Name: name, Driver: "bridge", Labels: meta.Labels, Internal: n.Internal, Created: meta.Created,
		Subnets:    []spec.Subnet{{Subnet: n.Subnet.String(), Gateway: n.Gateway.String()}},
		Containers: map[string]backends.EndpointInfo{}}
	cs, err := b.net.ListContainers(ctx)
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

// ListNetworks lists networks whose labels match.
func (b *Backend) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	ns, err := b.net.ListNetworks(ctx)
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	var out []backends.Network
	for _, n := range ns {
		nw, err := b.networkOf(ctx, n.Name)
		if err != nil || !matchLabels(nw.Labels, o.Labels) {
			continue
		}
		out = append(out, nw)
	}
	return out, nil
}

// RemoveNetwork removes a network no container is on.
func (b *Backend) RemoveNetwork(ctx context.Context, id string) error {
	if err := b.net.RemoveNetwork(ctx, id); err != nil {
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	if err := os.Remove(b.networkMetaPath(id)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove network %s: %w", id, err)
	}
	return nil
}

// Connect attaches a container with its own network namespace to one more
// network (docker network connect).
func (b *Backend) Connect(ctx context.Context, network, container string, aliases []string) error {
	st, err := b.find(b.ns(ctx), container)
	if err != nil {
		return err
	}
	if st.Netns == "" || st.Spec.Network.Kind != "" {
		return fmt.Errorf("container %s has no network namespace of its own to connect: %w", st.Name, errdefs.ErrFailedPrecondition)
	}
	res, err := b.net.Attach(ctx, cni.AttachOptions{ContainerID: st.ID, Netns: st.Netns, Names: []string{st.Name},
		Networks: []cni.Endpoint{{Network: network, Aliases: append([]string{st.Spec.App}, aliases...)}}})
	if err != nil {
		return err
	}
	if st.Networks == nil {
		st.Networks = map[string]backends.EndpointInfo{}
	}
	for _, a := range res.Attachments {
		st.Networks[a.Network] = backends.EndpointInfo{NetworkID: a.Network, IPAddress: a.IP.String(), IPPrefixLen: a.PrefixLen,
			Gateway: a.Gateway.String(), MacAddress: a.MAC, Aliases: a.Aliases}
	}
	if err := b.writeStored(st); err != nil {
		return err
	}
	_ = b.journal().Append(journalNetworkEvent("connect", st.ID))
	return nil
}

// Disconnect detaches a container from a network.
func (b *Backend) Disconnect(ctx context.Context, network, container string, force bool) error {
	st, err := b.find(b.ns(ctx), container)
	if err != nil {
		return err
	}
	if _, err := b.net.Detach(ctx, cni.DetachOptions{ContainerID: st.ID, Netns: st.Netns, Networks: []string{network}}); err != nil {
		return err
	}
	delete(st.Networks, network)
	if err := b.writeStored(st); err != nil {
		return err
	}
	_ = b.journal().Append(journalNetworkEvent("disconnect", st.ID))
	return nil
}

// journalNetworkEvent is a connect or disconnect: the container's ID
// only (EventOptions.Networks).
func journalNetworkEvent(action, id string) journal.Event {
	return journal.Event{Action: action, ID: id}
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
