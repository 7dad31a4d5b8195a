package cni

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// fromResult reads address, gateway and MAC of the sandbox interface.
func fromResult(r types.Result, ifName string) (Attachment, error) {
	res, err := types100.NewResultFromResult(r)
	if err != nil {
		return Attachment{}, fmt.Errorf("read CNI result: %w", err)
	}
	a := Attachment{Interface: ifName}
	sandbox := -1
	for i, itf := range res.Interfaces {
		if itf != nil && itf.Name == ifName && itf.Sandbox != "" {
			sandbox, a.MAC = i, itf.Mac
		}
	}
	for _, ipc := range res.IPs {
		if ipc == nil || ipc.Address.IP.To4() == nil {
			continue
		}
		if sandbox >= 0 && ipc.Interface != nil && *ipc.Interface != sandbox {
			continue
		}
		a.IP, _ = netip.AddrFromSlice(ipc.Address.IP.To4())
		a.PrefixLen, _ = ipc.Address.Mask.Size()
		if gw, ok := netip.AddrFromSlice(ipc.Gateway.To4()); ok {
			a.Gateway = gw
		}
		return a, nil
	}
	return Attachment{}, fmt.Errorf("CNI result has no IPv4 address for %s", ifName)
}

// cleanupTimeout bounds a rollback, which runs even when ctx is done.
const cleanupTimeout = 30 * time.Second

// rollback deletes what plan may have added and drops its pending records.
func (m *Manager) rollback(id string, plan []plannedAdd) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	cni := m.cniConfig()
	var errs []error
	for i := len(plan) - 1; i >= 0; i-- {
		p := plan[i]
		rt := *p.rt
		if !isNetns(rt.NetNS) {
			rt.NetNS = ""
		}
		if err := cni.DelNetworkList(ctx, p.list, &rt); err != nil {
			errs = append(errs, fmt.Errorf("undo network %s: %w", p.net.Name, err))
		}
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer unlock()
	cf, err := m.loadContainers()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	var nets []string
	for _, p := range plan {
		nets = append(nets, p.net.Name)
	}
	if c := cf.Containers[id]; c != nil {
		c.Attachments = slices.DeleteFunc(c.Attachments, func(a Attachment) bool { return slices.Contains(nets, a.Network) })
		if len(c.Attachments) == 0 {
			delete(cf.Containers, id)
		}
	}
	if err := m.saveContainers(cf); err != nil {
		return errors.Join(append(errs, err)...)
	}
	// commit may already have told the peers about us.
	_, _ = syncHosts(cf, id, nets)
	return errors.Join(errs...)
}

// commit records the results and rewrites the hosts files concerned; a
// failure to write the container's own hosts file fails the Attach.
func (m *Manager) commit(ctx context.Context, o AttachOptions, results []Attachment) ([]string, error) {
	unlock, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cf, err := m.loadContainers()
	if err != nil {
		return nil, err
	}
	c := cf.Containers[o.ContainerID]
	if c == nil {
		return nil, fmt.Errorf("record of %s vanished during attach: %w", o.ContainerID, errdefs.ErrAborted)
	}
	var nets []string
	for _, r := range results {
		if a := c.attachment(r.Network); a != nil {
			*a = r
		}
		nets = append(nets, r.Network)
	}
	if err := m.saveContainers(cf); err != nil {
		return nil, err
	}
	selfErr, peerErr := syncHosts(cf, o.ContainerID, nets)
	return warnings(peerErr), selfErr
}

// warnings flattens joined errors into lines for a Result.
func warnings(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}
