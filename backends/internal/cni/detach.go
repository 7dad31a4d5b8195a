package cni

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/containernetworking/cni/libcni"
)

// DetachOptions describe what to detach.
type DetachOptions struct {
	ContainerID string
	// Netns is used only for attachments neither libcni's cache nor the
	// store remembers a path for. A namespace that is gone is fine.
	Netns string
	// Networks limits the detach (docker network disconnect); empty: all.
	Networks []string
}

// DetachResult reports what could not be tidied but did not fail Detach.
type DetachResult struct {
	// Warnings name peers whose hosts file could not be rewritten.
	Warnings []string
}

// plannedDel is one CNI DEL Detach will run.
type plannedDel struct {
	network string
	list    *libcni.NetworkConfigList
	rt      *libcni.RuntimeConf
}

// Detach runs CNI DEL for the container's networks, then forgets them and
// rewrites the peers' hosts files. It is idempotent and works when the
// namespace is already gone (after a crash or reboot): the DEL then only
// releases the IPAM lease and the port mappings, the veth having died with
// the namespace. A network whose DEL fails stays recorded, to retry.
func (m *Manager) Detach(ctx context.Context, o DetachOptions) (DetachResult, error) {
	res, err := m.detach(ctx, o)
	if err != nil {
		return res, fmt.Errorf("detach %s: %w", o.ContainerID, err)
	}
	return res, nil
}

func (m *Manager) detach(ctx context.Context, o DetachOptions) (DetachResult, error) {
	if err := validID("container ID", o.ContainerID); err != nil {
		return DetachResult{}, err
	}
	plan, err := m.planDetach(o)
	if err != nil {
		return DetachResult{}, err
	}
	cni := m.cniConfig()
	var errs []error
	var done []string
	for _, p := range plan {
		if p.list != nil {
			if p.rt.NetNS != "" && !isNetns(p.rt.NetNS) {
				p.rt.NetNS = "" // plugins then skip the namespace
			}
			if err := cni.DelNetworkList(ctx, p.list, p.rt); err != nil {
				errs = append(errs, fmt.Errorf("network %s: %w", p.network, err))
				continue
			}
		}
		done = append(done, p.network)
	}
	warns, err := m.forget(ctx, o.ContainerID, done)
	return DetachResult{Warnings: warns}, errors.Join(append(errs, err)...)
}

// planDetach prefers libcni's cache (the exact config and runtime args of
// the ADD); attachments only the store knows (an ADD that died midway)
// get a config rebuilt from the network record, or none when the network
// is gone too, and are then only forgotten.
func (m *Manager) planDetach(o DetachOptions) ([]plannedDel, error) {
	want := func(n string) bool { return len(o.Networks) == 0 || slices.Contains(o.Networks, n) }
	atts, err := m.cniConfig().GetCachedAttachments(o.ContainerID)
	if err != nil {
		return nil, fmt.Errorf("read CNI cache: %w", err)
	}
	var plan []plannedDel
	for _, a := range atts {
		if !want(a.Network) {
			continue
		}
		list, err := libcni.NetworkConfFromBytes(a.Config)
		if err != nil {
			return nil, fmt.Errorf("cached config of network %s: %w", a.Network, err)
		}
		netns := a.NetNS
		if netns == "" {
			netns = o.Netns
		}
		rt := &libcni.RuntimeConf{ContainerID: a.ContainerID, NetNS: netns, IfName: a.IfName, Args: a.CniArgs, CapabilityArgs: a.CapabilityArgs}
		plan = append(plan, plannedDel{network: a.Network, list: list, rt: rt})
	}
	cf, err := m.loadContainers()
	if err != nil {
		return nil, err
	}
	nf, err := m.loadNetworks()
	if err != nil {
		return nil, err
	}
	c := cf.Containers[o.ContainerID]
	if c == nil {
		return plan, nil
	}
	for _, a := range c.Attachments {
		if !want(a.Network) || slices.ContainsFunc(plan, func(p plannedDel) bool { return p.network == a.Network }) {
			continue
		}
		p := plannedDel{network: a.Network}
		if n, ok := nf.Networks[a.Network]; ok {
			conf, err := buildConfList(n, m.ipamDir(), confOptions{ports: len(a.Ports) > 0})
			if err != nil {
				return nil, err
			}
			if p.list, err = libcni.NetworkConfFromBytes(conf); err != nil {
				return nil, err
			}
			netns := c.Netns
			if netns == "" {
				netns = o.Netns
			}
			p.rt = &libcni.RuntimeConf{ContainerID: c.ID, NetNS: netns, IfName: a.Interface, CapabilityArgs: map[string]any{}}
			if len(a.Ports) > 0 {
				p.rt.CapabilityArgs["portMappings"] = portMappingsArg(a.Ports)
			}
		}
		plan = append(plan, p)
	}
	return plan, nil
}

// forget drops the detached networks from the container's record and
// rewrites the hosts files of whoever shared them.
func (m *Manager) forget(ctx context.Context, id string, networks []string) ([]string, error) {
	if len(networks) == 0 {
		return nil, nil
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cf, err := m.loadContainers()
	if err != nil {
		return nil, err
	}
	c := cf.Containers[id]
	if c == nil {
		return nil, nil
	}
	c.Attachments = slices.DeleteFunc(c.Attachments, func(a Attachment) bool { return slices.Contains(networks, a.Network) })
	if len(c.Attachments) == 0 {
		delete(cf.Containers, id)
	}
	if err := m.saveContainers(cf); err != nil {
		return nil, err
	}
	selfErr, peerErr := syncHosts(cf, id, networks)
	return warnings(errors.Join(selfErr, peerErr)), nil
}
