package cni

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
)

// PortMapping publishes a container port on the host.
type PortMapping struct {
	// HostIP restricts the mapping to one host address (e.g. 127.0.0.1);
	// zero or unspecified means every address.
	HostIP netip.Addr `json:"hostIP,omitzero"`
	// HostPort 0 asks Attach to pick one (see pickHostPorts).
	HostPort      uint16 `json:"hostPort"`
	ContainerPort uint16 `json:"containerPort"`
	// Protocol is "tcp" or "udp".
	Protocol string `json:"protocol"`
}

// Attachment is one container interface on one network.
type Attachment struct {
	Network   string     `json:"network"`
	Interface string     `json:"interface"`
	Aliases   []string   `json:"aliases,omitempty"`
	IP        netip.Addr `json:"ip,omitzero"`
	PrefixLen int        `json:"prefixLen,omitempty"`
	Gateway   netip.Addr `json:"gateway,omitzero"`
	MAC       string     `json:"mac,omitempty"`
	// Ports are the mappings published through this attachment.
	Ports []PortMapping `json:"ports,omitempty"`
	// Pending is set while the CNI ADD runs (or if the process died in
	// it): the attachment holds its network and interface name but no
	// address yet, and names do not resolve to it.
	Pending bool `json:"pending,omitempty"`
}

// Container is what the store knows of one container: its names and where
// it is attached. Peers resolve Names and each attachment's Aliases.
type Container struct {
	ID          string       `json:"id"`
	Hostname    string       `json:"hostname,omitempty"`
	Names       []string     `json:"names,omitempty"`
	HostsPath   string       `json:"hostsPath,omitempty"`
	Netns       string       `json:"netns,omitempty"`
	ExtraHosts  []HostEntry  `json:"extraHosts,omitempty"`
	Attachments []Attachment `json:"attachments"`
}

// HostEntry is an extra hosts-file line.
type HostEntry struct {
	Name string     `json:"name"`
	IP   netip.Addr `json:"ip"`
}

func (c *Container) attachment(network string) *Attachment {
	for i := range c.Attachments {
		if c.Attachments[i].Network == network {
			return &c.Attachments[i]
		}
	}
	return nil
}

// names are what peers on network resolve to this container.
func (c *Container) names(a *Attachment) []string {
	return append(slices.Clone(c.Names), a.Aliases...)
}

// containersFile is cni/containers.json.
type containersFile struct {
	Containers map[string]*Container `json:"containers"`
}

func (m *Manager) loadContainers() (containersFile, error) {
	f := containersFile{Containers: map[string]*Container{}}
	if err := readJSON(m.containersPath(), &f); err != nil {
		return f, err
	}
	if f.Containers == nil {
		f.Containers = map[string]*Container{}
	}
	for id, c := range f.Containers {
		if c == nil {
			delete(f.Containers, id)
		}
	}
	return f, nil
}

func (m *Manager) saveContainers(f containersFile) error {
	return writeJSON(m.containersPath(), f)
}

// ListContainers returns every container the store knows, sorted by ID,
// for a reconcile pass (e.g. after a reboot: Detach the ones that are gone).
func (m *Manager) ListContainers(_ context.Context) ([]Container, error) {
	f, err := m.loadContainers()
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]Container, 0, len(f.Containers))
	for _, id := range slices.Sorted(maps.Keys(f.Containers)) {
		out = append(out, *f.Containers[id])
	}
	return out, nil
}
