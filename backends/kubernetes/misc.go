package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes with ps inside it (the image needs
// ps): psArgs as given (docker top's default -ef), else plain ps where the
// image's ps takes no such options (busybox).
func (b *Backend) Top(ctx context.Context, id, psArgs string) (backends.Processes, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return backends.Processes{}, err
	}
	args := strings.Fields(psArgs)
	if len(args) == 0 {
		args = []string{"-ef"}
	}
	var out, errb bytes.Buffer
	code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: append([]string{"ps"}, args...), Stdout: &out, Stderr: &errb})
	if err == nil && code != 0 && psArgs == "" {
		out.Reset()
		errb.Reset()
		code, err = b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"ps"}, Stdout: &out, Stderr: &errb})
	}
	if err != nil {
		return backends.Processes{}, fmt.Errorf("top %s: %w", c.rec.Name, err)
	}
	if code != 0 {
		return backends.Processes{}, fmt.Errorf("top %s: ps exited %d: %s: %w", c.rec.Name, code, strings.TrimSpace(errb.String()), errdefs.ErrUnknown)
	}
	return parsePS(out.String()), nil
}

// parsePS splits ps output into columns: the header's, the last one
// taking the rest of the line (the command).
func parsePS(text string) backends.Processes {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 {
		return backends.Processes{}
	}
	p := backends.Processes{Titles: strings.Fields(lines[0])}
	n := len(p.Titles)
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) == 0 || n == 0 {
			continue
		}
		if len(f) > n {
			f = append(f[:n-1], strings.Join(f[n-1:], " "))
		}
		p.Processes = append(p.Processes, f)
	}
	return p
}

// Rename gives the container a new name (its objects keep theirs).
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.rec.Name == name {
		return nil
	}
	if c.cm == nil {
		return notForReplica(c, "rename")
	}
	if err := b.nameFree(ctx, name); err != nil {
		return err
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q},"annotations":{%q:%q}}}`, labelName, labelValue(name), annName, name)
	if _, err := b.core.ConfigMaps(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return wrap(err, "rename %s to %s", c.rec.Name, name)
	}
	if c.pod != nil {
		if _, err := b.core.Pods(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "rename %s to %s (pod)", c.rec.Name, name)
		}
	}
	c.rec.Name = name
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "rename", nil)
	return nil
}

// Connect attaches a container to a network: it joins the network's
// policy and its names resolve there at once. A running container's own
// resolver keeps its search domains until it is started again, so it
// reaches the new network's members by their full names
// (NAME.<network>.<namespace>.svc) until then.
func (b *Backend) Connect(ctx context.Context, network, id string, aliases []string) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	svc, err := b.networkService(ctx, network)
	if err != nil {
		return err
	}
	ref := netRef{Network: svc.Annotations[annNetwork], Object: svc.Name, Aliases: aliases}
	if ref.Network == "" {
		ref.Network = svc.Name
	}
	if c.rec.App != "" && !slices.Contains(ref.Aliases, c.rec.App) {
		ref.Aliases = append([]string{c.rec.App}, ref.Aliases...)
	}
	for _, n := range c.rec.Networks {
		if n.Object == ref.Object {
			return nil // already on it
		}
	}
	search := ref.Object + "." + b.cfg.namespace + ".svc." + b.cfg.clusterDomain
	if err := b.updateRecord(ctx, c, func(r *record) {
		r.Networks = append(r.Networks, ref)
		if r.PodLabels == nil {
			r.PodLabels = map[string]string{}
		}
		r.PodLabels[netLabelPrefix+ref.Object] = "1"
		if r.Pod.DNSConfig == nil {
			r.Pod.DNSConfig = &corev1.PodDNSConfig{}
		}
		r.Pod.DNSConfig.Searches = append(r.Pod.DNSConfig.Searches, search)
	}); err != nil {
		return err
	}
	if c.pod != nil && stateOf(c.pod).state == backends.StateRunning {
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"1"}}}`, netLabelPrefix+ref.Object)
		if _, err := b.core.Pods(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return wrap(err, "connect %s to %s", c.rec.Name, network)
		}
		owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: c.pod.Name, UID: c.pod.UID}
		if err := b.putSlice(ctx, c, ref, owner); err != nil {
			return err
		}
		b.resolveOn(ctx, c, search, "")
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "connect", nil)
	return nil
}

// Disconnect detaches a container from a network.
func (b *Backend) Disconnect(ctx context.Context, network, id string, force bool) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	svc, err := b.networkService(ctx, network)
	if err != nil {
		return err
	}
	on := false
	for _, n := range c.rec.Networks {
		on = on || n.Object == svc.Name
	}
	if !on {
		return fmt.Errorf("disconnect %s from %s: not connected: %w", c.rec.Name, network, errdefs.ErrNotFound)
	}
	search := svc.Name + "." + b.cfg.namespace + ".svc." + b.cfg.clusterDomain
	if err := b.updateRecord(ctx, c, func(r *record) {
		r.Networks = slices.DeleteFunc(r.Networks, func(n netRef) bool { return n.Object == svc.Name })
		delete(r.PodLabels, netLabelPrefix+svc.Name)
		if r.Pod.DNSConfig != nil {
			r.Pod.DNSConfig.Searches = slices.DeleteFunc(r.Pod.DNSConfig.Searches, func(s string) bool { return s == search })
		}
	}); err != nil {
		return err
	}
	if c.pod != nil {
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, netLabelPrefix+svc.Name)
		if _, err := b.core.Pods(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "disconnect %s from %s", c.rec.Name, network)
		}
		err := b.disc.EndpointSlices(b.cfg.namespace).Delete(ctx, sliceName(c.pod.Name, netRef{Object: svc.Name}), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "disconnect %s from %s", c.rec.Name, network)
		}
		if stateOf(c.pod).state == backends.StateRunning {
			b.resolveOn(ctx, c, "", search)
		}
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "disconnect", nil)
	return nil
}

// networkService finds a network's Service by ID (its name) or runtime
// name.
func (b *Backend) networkService(ctx context.Context, network string) (*corev1.Service, error) {
	svcs := b.core.Services(b.cfg.namespace)
	svc, err := svcs.Get(ctx, network, metav1.GetOptions{})
	if err != nil {
		svc, err = svcs.Get(ctx, netObjectName(network), metav1.GetOptions{})
	}
	if err != nil {
		return nil, wrap(err, "network %s", network)
	}
	if svc.Labels[labelKind] != kindNetwork {
		return nil, fmt.Errorf("network %s: no such network: %w", network, errdefs.ErrNotFound)
	}
	return svc, nil
}

// updateRecord changes a container's record (retrying on a concurrent
// update).
func (b *Backend) updateRecord(ctx context.Context, c container, update func(*record)) error {
	if c.cm == nil {
		return notForReplica(c, "change")
	}
	cms := b.core.ConfigMaps(b.cfg.namespace)
	cm := c.cm
	for try := 0; ; try++ {
		r, err := decodeRecord(cm)
		if err != nil {
			return err
		}
		update(&r)
		next, err := r.configMap(b.cfg.namespace, cm.Name)
		if err != nil {
			return err
		}
		upd := cm.DeepCopy()
		upd.Data = next.Data
		if _, err = cms.Update(ctx, upd, metav1.UpdateOptions{}); err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || try > 5 {
			return wrap(err, "update container %s", c.rec.Name)
		}
		if cm, err = cms.Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
			return wrap(err, "update container %s", c.rec.Name)
		}
	}
}
