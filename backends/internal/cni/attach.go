package cni

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/containernetworking/cni/libcni"
)

// Endpoint asks for one network of an Attach.
type Endpoint struct {
	Network string
	// Aliases are extra names peers on this network resolve.
	Aliases []string
	// IPv4, when set, is the address to take (Compose ipv4_address).
	IPv4 netip.Addr
}

// AttachOptions describe one container to attach.
type AttachOptions struct {
	ContainerID string
	// Netns is the path of the container's network namespace (CreateNetns).
	Netns string
	// Hostname is the container's own hosts-file line.
	Hostname string
	// Names are resolved by peers on every network (service name,
	// container name).
	Names []string
	// ExtraHosts are extra hosts-file entries (Compose extra_hosts), kept
	// across rewrites.
	ExtraHosts []HostEntry
	// HostsPath, when set, is kept up to date as peers come and go; the
	// caller bind-mounts it at /etc/hosts.
	HostsPath string
	// Networks in interface order: the first new one is eth0 (or the next
	// free ethN when the container is already attached elsewhere).
	Networks []Endpoint
	// Ports are published through the first network of this call only:
	// the caller decides which replica publishes.
	Ports []PortMapping
}

// AttachResult has one Attachment per requested network, in order.
type AttachResult struct {
	Attachments []Attachment
	// Warnings name peers whose hosts file could not be rewritten.
	Warnings []string
}

// Attach runs CNI ADD for each network. Networks must exist
// (EnsureNetwork): errdefs NotFound otherwise. On any failure what was
// added is deleted again. Calling it again for a container adds networks
// (docker network connect); a network it is already on is a Conflict.
func (m *Manager) Attach(ctx context.Context, opts AttachOptions) (AttachResult, error) {
	res, err := m.attach(ctx, opts)
	if err != nil {
		return AttachResult{}, fmt.Errorf("attach %s to %s: %w", opts.ContainerID, endpointNames(opts.Networks), err)
	}
	return res, nil
}

func endpointNames(eps []Endpoint) string {
	names := make([]string, len(eps))
	for i, e := range eps {
		names[i] = e.Network
	}
	return strings.Join(names, ",")
}

func checkAttach(o AttachOptions) error {
	if err := validID("container ID", o.ContainerID); err != nil {
		return err
	}
	if o.Netns == "" {
		return fmt.Errorf("netns path: required: %w", errdefs.ErrInvalidArgument)
	}
	if len(o.Networks) == 0 {
		return fmt.Errorf("no network given: %w", errdefs.ErrInvalidArgument)
	}
	if o.Hostname != "" {
		if err := validHostName(o.Hostname); err != nil {
			return fmt.Errorf("hostname: %w", err)
		}
	}
	for _, n := range o.Names {
		if err := validHostName(n); err != nil {
			return err
		}
	}
	for _, h := range o.ExtraHosts {
		if err := validHostName(h.Name); err != nil || !h.IP.IsValid() {
			return fmt.Errorf("extra host %s=%s: %w", h.Name, h.IP, errdefs.ErrInvalidArgument)
		}
	}
	if o.HostsPath != "" {
		if err := checkHostsPath(o.HostsPath); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, e := range o.Networks {
		if err := validID("network name", e.Network); err != nil {
			return err
		}
		if seen[e.Network] {
			return fmt.Errorf("network %s given twice: %w", e.Network, errdefs.ErrInvalidArgument)
		}
		seen[e.Network] = true
		for _, a := range e.Aliases {
			if err := validHostName(a); err != nil {
				return fmt.Errorf("alias on %s: %w", e.Network, err)
			}
		}
		if e.IPv4.IsValid() && !e.IPv4.Is4() {
			return fmt.Errorf("address %s on %s: only IPv4 is supported: %w", e.IPv4, e.Network, errdefs.ErrInvalidArgument)
		}
	}
	for _, p := range o.Ports {
		if err := checkPort(p); err != nil {
			return err
		}
	}
	return nil
}

func checkPort(p PortMapping) error {
	if p.ContainerPort == 0 {
		return fmt.Errorf("port %d:%d: the container port is required: %w", p.HostPort, p.ContainerPort, errdefs.ErrInvalidArgument)
	}
	if pr := strings.ToLower(p.Protocol); pr != "tcp" && pr != "udp" {
		return fmt.Errorf("port %d/%s: protocol must be tcp or udp: %w", p.ContainerPort, p.Protocol, errdefs.ErrInvalidArgument)
	}
	if p.HostIP.IsValid() && !p.HostIP.Is4() && !p.HostIP.IsUnspecified() {
		return fmt.Errorf("port %d: host IP %s: only IPv4 is supported: %w", p.HostPort, p.HostIP, errdefs.ErrInvalidArgument)
	}
	return nil
}

// plannedAdd is one CNI ADD Attach will run.
type plannedAdd struct {
	net  Network
	list *libcni.NetworkConfigList
	rt   *libcni.RuntimeConf
}

func (m *Manager) attach(ctx context.Context, o AttachOptions) (AttachResult, error) {
	if err := checkAttach(o); err != nil {
		return AttachResult{}, err
	}
	for _, p := range requiredPlugins() {
		if err := m.findPlugin(p); err != nil {
			return AttachResult{}, err
		}
	}
	o.Ports = slices.Clone(o.Ports) // reserve picks the host ports left 0
	plan, err := m.reserve(ctx, &o)
	if err != nil {
		return AttachResult{}, err
	}
	cni := m.cniConfig()
	results := make([]Attachment, 0, len(plan))
	for i, p := range plan {
		r, err := cni.AddNetworkList(ctx, p.list, p.rt)
		if err == nil {
			var a Attachment
			if a, err = fromResult(r, p.rt.IfName); err == nil {
				a.Network, a.Aliases = p.net.Name, o.Networks[i].Aliases
				if i == 0 {
					a.Ports = o.Ports
				}
				results = append(results, a)
				continue
			}
		}
		// The spec wants DEL after a failed ADD: it may have half worked.
		return AttachResult{}, errors.Join(fmt.Errorf("network %s: %w", p.net.Name, err),
			m.rollback(o.ContainerID, plan[:i+1]))
	}
	warns, err := m.commit(ctx, o, results)
	if err != nil {
		return AttachResult{}, errors.Join(err, m.rollback(o.ContainerID, plan))
	}
	return AttachResult{Attachments: results, Warnings: warns}, nil
}

// reserve checks the networks, records pending attachments (so a racing
// RemoveNetwork sees them), makes sure the networks' firewall rules are
// there (a reboot drops them), and plans one ADD per network.
func (m *Manager) reserve(ctx context.Context, o *AttachOptions) ([]plannedAdd, error) {
	ipt, err := m.iptables()
	if err != nil {
		return nil, err
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	nf, err := m.loadNetworks()
	if err != nil {
		return nil, err
	}
	cf, err := m.loadContainers()
	if err != nil {
		return nil, err
	}
	if err := pickHostPorts(cf, o.ContainerID, o.Ports, ephemeralPorts()); err != nil {
		return nil, err
	}
	if err := checkPortsFree(cf, o.ContainerID, o.Ports); err != nil {
		return nil, err
	}
	c := containerFor(cf, *o)
	hasRoute := false
	for _, a := range c.Attachments {
		hasRoute = hasRoute || !nf.Networks[a.Network].Internal
	}
	var plan []plannedAdd
	for i, e := range o.Networks {
		n, ok := nf.Networks[e.Network]
		if !ok {
			return nil, fmt.Errorf("network %s: %w", e.Network, errdefs.ErrNotFound)
		}
		if c.attachment(n.Name) != nil {
			return nil, fmt.Errorf("already attached to network %s: %w", n.Name, errdefs.ErrConflict)
		}
		if e.IPv4.IsValid() {
			if err := checkStaticIP(cf, n, e.IPv4); err != nil {
				return nil, err
			}
		}
		if ok, err := ipt.firewallPresent(ctx, n); err != nil {
			return nil, err
		} else if !ok {
			if err := ipt.ensureFirewall(ctx, n); err != nil {
				return nil, err
			}
		}
		ports := i == 0 && len(o.Ports) > 0
		route := !n.Internal && !hasRoute
		hasRoute = hasRoute || route
		add, err := m.plannedAddFor(n, c, *o, e, route, ports)
		if err != nil {
			return nil, err
		}
		att := Attachment{Network: n.Name, Interface: add.rt.IfName, Pending: true}
		if ports {
			att.Ports = o.Ports // held from now on, so a concurrent attach sees them taken
		}
		c.Attachments = append(c.Attachments, att)
		plan = append(plan, add)
	}
	cf.Containers[c.ID] = c
	return plan, m.saveContainers(cf)
}

// containerFor is the record of o's container, updated with what o says
// of it.
func containerFor(cf containersFile, o AttachOptions) *Container {
	c := cf.Containers[o.ContainerID]
	if c == nil {
		c = &Container{ID: o.ContainerID}
	}
	c.Netns = o.Netns
	if o.Hostname != "" {
		c.Hostname = o.Hostname
	}
	if len(o.Names) > 0 {
		c.Names = o.Names
	}
	if len(o.ExtraHosts) > 0 {
		c.ExtraHosts = o.ExtraHosts
	}
	if o.HostsPath != "" {
		c.HostsPath = o.HostsPath
	}
	return c
}

// plannedAddFor plans the ADD of container c to network n: its conflist
// (the default route, the published ports) and runtime config (the next
// free interface, a static address).
func (m *Manager) plannedAddFor(n Network, c *Container, o AttachOptions, e Endpoint, route, ports bool) (plannedAdd, error) {
	conf, err := buildConfList(n, m.ipamDir(), confOptions{defaultRoute: route, ports: ports})
	if err != nil {
		return plannedAdd{}, err
	}
	list, err := libcni.NetworkConfFromBytes(conf)
	if err != nil {
		return plannedAdd{}, err
	}
	rt := &libcni.RuntimeConf{ContainerID: o.ContainerID, NetNS: o.Netns, IfName: freeInterface(c), CapabilityArgs: map[string]any{}}
	if e.IPv4.IsValid() {
		rt.CapabilityArgs["ips"] = staticIPArg(e.IPv4)
	}
	if ports {
		rt.CapabilityArgs["portMappings"] = portMappingsArg(o.Ports)
	}
	return plannedAdd{net: n, list: list, rt: rt}, nil
}

// checkStaticIP refuses an address outside the range host-local hands out
// or held by another container, before any plugin runs.
func checkStaticIP(cf containersFile, n Network, ip netip.Addr) error {
	if !usableHost(n.Subnet, ip) || ip == n.Gateway {
		return fmt.Errorf("address %s: not a free host address of %s (%s, gateway %s): %w",
			ip, n.Name, n.Subnet, n.Gateway, errdefs.ErrInvalidArgument)
	}
	for _, c := range cf.Containers {
		if a := c.attachment(n.Name); a != nil && a.IP == ip {
			return fmt.Errorf("address %s on %s: taken by %s: %w", ip, n.Name, c.ID, errdefs.ErrConflict)
		}
	}
	return nil
}

// freeInterface is the lowest ethN the container does not use yet.
func freeInterface(c *Container) string {
	for i := 0; ; i++ {
		name := "eth" + strconv.Itoa(i)
		used := false
		for _, a := range c.Attachments {
			used = used || a.Interface == name
		}
		if !used {
			return name
		}
	}
}
