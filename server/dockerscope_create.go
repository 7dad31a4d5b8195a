package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
)

// admitContainer is Create's admission through the docker endpoint: the
// spec's labels and project as claimLabels says, its image the tenant's
// to use, and every namespace, network and volume it names the tenant's.
// (What it takes from the host — privileged, capabilities, devices, bind
// sources — dockerapi checked with this server's policy before.)
func (sc *scoped) admitContainer(ctx context.Context, c backends.ContainerSpec) (backends.ContainerSpec, error) {
	at := "container " + c.Name
	if c.Sidecar != nil {
		return c, fmt.Errorf("%w: %s: a sidecar is cornus's own", errdefs.ErrInvalidArgument, at)
	}
	if err := sc.ownName("container", c.Name); err != nil {
		return c, err
	}
	labels, project, err := sc.claimLabels(ctx, at, c.Labels, c.Project)
	if err != nil {
		return c, err
	}
	if labels[backends.ComposeService] == "" {
		// docker run: a one-off of the deployment's project, which its
		// down removes.
		labels[backends.ComposeService] = c.App
		labels[backends.ComposeOneoff] = "True"
		labels[backends.LabelOneoff] = "true"
		labels[backends.ComposeNumber] = strconv.Itoa(max(c.Replica, 1))
	}
	labels[backends.LabelProject] = project
	labels[backends.LabelApp] = labels[backends.ComposeService]
	labels[backends.LabelReplica] = labels[backends.ComposeNumber]
	c.Labels, c.Project = labels, project
	if err := sc.s.checkImageRef(&admission{ctx: ctx, tenant: sc.tenant}, at+": Image", c.Image); err != nil {
		return c, err
	}
	if c, err = sc.admitNamespaces(ctx, at, c); err != nil {
		return c, err
	}
	if c, err = sc.ownNetwork(ctx, at, c); err != nil {
		return c, err
	}
	if err := sc.admitAttachments(ctx, at, c); err != nil {
		return c, err
	}
	return c, nil
}

// ownNetwork puts a container the runtime would put on its default
// network, which every tenant's and the operator's containers share, on
// its project's default network instead (made if missing), as docker
// compose does; up refuses the runtime's network too (admit.go).
func (sc *scoped) ownNetwork(ctx context.Context, at string, c backends.ContainerSpec) (backends.ContainerSpec, error) {
	if c.Network.Kind != "bridge" && (c.Network.Kind != "" || len(c.Networks) > 0) {
		return c, nil
	}
	if !sc.b.Capabilities().Has(backends.FeatureNetworks) {
		return c, nil // the runtime networks its containers itself (a pod network)
	}
	n, err := sc.EnsureNetwork(ctx, backends.NetworkSpec{Project: c.Project, Key: "default"})
	if err != nil {
		return c, fmt.Errorf("%s: its project's default network: %w", at, err)
	}
	c.Network = backends.NetworkMode{}
	c.Networks = []backends.NetworkAttachment{{Network: n.Name, Key: "default", Aliases: []string{c.App}}}
	return c, nil
}

// admitNamespaces: a namespace shared with a container is shared with
// one of the tenant's, named by its ID from here on (a name could be
// another container's by the time the runtime resolves it), and never
// with a replica whose companion enforces something in its namespace
// (an egress redirect a sibling holding NET_RAW could pass); the other
// namespaces are the container's own or the host's (the policy's).
func (sc *scoped) admitNamespaces(ctx context.Context, at string, c backends.ContainerSpec) (backends.ContainerSpec, error) {
	for _, ns := range []struct {
		field string
		kind  *string
		ref   *string
	}{
		{"NetworkMode", &c.Network.Kind, &c.Network.Container},
		{"PidMode", &c.PID.Kind, &c.PID.Container}, {"IpcMode", &c.IPC.Kind, &c.IPC.Container},
	} {
		if *ns.kind != "container" {
			continue
		}
		d, err := sc.own(ctx, *ns.ref)
		if err != nil {
			return c, fmt.Errorf("%w: %s: HostConfig.%s: container %s is not in one of your projects", errdefs.ErrPermissionDenied, at, ns.field, *ns.ref)
		}
		if d.Labels[engine.LabelHasCompanion] != "" {
			return c, fmt.Errorf("%w: %s: HostConfig.%s: container %s has a caretaker companion, whose namespace is not to share", errdefs.ErrPermissionDenied, at, ns.field, *ns.ref)
		}
		*ns.ref = d.ID
	}
	for _, ns := range []struct{ field, kind string }{{"UTSMode", c.UTS.Kind}, {"UsernsMode", c.UserNS.Kind}, {"CgroupnsMode", c.Cgroup.Kind}} {
		switch ns.kind {
		case "", "host", "private":
		default:
			return c, fmt.Errorf("%w: %s: HostConfig.%s %q: its own (empty, private) or the host's", errdefs.ErrPermissionDenied, at, ns.field, ns.kind)
		}
	}
	return c, nil
}

// admitAttachments: the networks a container joins and the named volumes
// it mounts are the tenant's (an anonymous volume is new).
func (sc *scoped) admitAttachments(ctx context.Context, at string, c backends.ContainerSpec) error {
	for _, n := range c.Networks {
		if _, err := sc.network(ctx, n.Network); err != nil {
			return fmt.Errorf("%w: %s: network %s is not one of your projects'", errdefs.ErrPermissionDenied, at, n.Network)
		}
	}
	var named []string
	for _, v := range c.Volumes {
		if v.Name != "" {
			named = append(named, v.Name)
		}
	}
	if len(named) == 0 {
		return nil
	}
	vs, err := sc.ListVolumes(ctx, backends.ListOptions{})
	if err != nil {
		return fmt.Errorf("%s: list volumes: %w", at, err)
	}
	for _, name := range named {
		if !slices.ContainsFunc(vs, func(v backends.Volume) bool { return v.Name == name }) {
			return fmt.Errorf("%w: %s: volume %s is not one of your projects'", errdefs.ErrPermissionDenied, at, name)
		}
	}
	return nil
}

// Networks: the tenant's projects'.

func (sc *scoped) networks() backends.Networks { return sc.b.(backends.Networks) }

// network is the tenant's network ref (a name or an ID).
func (sc *scoped) network(ctx context.Context, ref string) (backends.Network, error) {
	ns, err := sc.ListNetworks(ctx, backends.ListOptions{})
	if err != nil {
		return backends.Network{}, err
	}
	for _, n := range ns {
		if n.Name == ref || n.ID == ref {
			return n, nil
		}
	}
	return backends.Network{}, noSuch("network", ref)
}

func (sc *scoped) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	return ensureOwned(ctx, sc, "network", n.Key, n.Network.Name, n.Labels, n.Project,
		func(labels map[string]string, project string) (backends.Network, error) {
			n.Labels, n.Project = labels, project
			return sc.networks().EnsureNetwork(ctx, n)
		}, func(got backends.Network) (string, map[string]string) { return got.Name, got.Labels })
}

func (sc *scoped) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	ns, err := sc.networks().ListNetworks(ctx, o)
	return slices.DeleteFunc(ns, func(n backends.Network) bool { return !sc.mine(n.Labels) }), err
}

func (sc *scoped) RemoveNetwork(ctx context.Context, id string) error {
	n, err := sc.network(ctx, id)
	if err != nil {
		return err
	}
	return sc.networks().RemoveNetwork(ctx, n.ID)
}

func (sc *scoped) Connect(ctx context.Context, network, container string, aliases []string) error {
	return sc.connected(ctx, network, container, func(c backends.NetworkConnector, n, id string) error {
		return c.Connect(ctx, n, id, aliases)
	})
}

func (sc *scoped) Disconnect(ctx context.Context, network, container string, force bool) error {
	return sc.connected(ctx, network, container, func(c backends.NetworkConnector, n, id string) error {
		return c.Disconnect(ctx, n, id, force)
	})
}

// connected runs f on the tenant's network and container.
func (sc *scoped) connected(ctx context.Context, network, container string, f func(backends.NetworkConnector, string, string) error) error {
	n, err := sc.network(ctx, network)
	if err != nil {
		return err
	}
	return sc.ownID(ctx, container, func(id string) error { return f(sc.b.(backends.NetworkConnector), n.Name, id) })
}
