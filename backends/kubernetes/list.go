package kubernetes

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"

	"github.com/containerd/errdefs"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
)

// container is one container: its record (in its ConfigMap) and its pod,
// nil while it has none. A workload's replica (workload.go) has no
// ConfigMap: its record is its pod template's, and a stopped one is an
// entry of its Deployment (stoppedOf).
type container struct {
	cm        *corev1.ConfigMap
	rec       record
	pod       *corev1.Pod
	stoppedOf *appsv1.Deployment
}

// obj is the name its record, pod and files Secret share; a workload's
// replica's is its pod's ("" when stopped).
func (c container) obj() string {
	switch {
	case c.cm != nil:
		return c.cm.Name
	case c.pod != nil:
		return c.pod.Name
	}
	return ""
}

// ref is what the container's events are about: its record, or a
// workload replica's pod (a stopped one's Deployment).
func (c container) ref(namespace string) corev1.ObjectReference {
	if d := c.stoppedOf; d != nil {
		return corev1.ObjectReference{APIVersion: "apps/v1", Kind: kindDeployment, Namespace: namespace, Name: d.Name, UID: d.UID}
	}
	if c.cm == nil {
		return corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: c.pod.Name, UID: c.pod.UID}
	}
	return corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: namespace, Name: c.cm.Name, UID: c.cm.UID}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{1,64}$`)

// find looks a container up by ID, unique ID prefix or name.
func (b *Backend) find(ctx context.Context, ref string) (container, error) {
	if ref == "" {
		return container{}, fmt.Errorf("container reference is empty: %w", errdefs.ErrInvalidArgument)
	}
	sel := labels.Set{labelKind: kindContainer}
	switch {
	case len(ref) == 64 && hexID.MatchString(ref):
		sel[labelID] = idLabel(ref)
	case !hexID.MatchString(ref):
		sel[labelName] = labelValue(strings.TrimPrefix(ref, "/"))
	}
	cms, err := b.core.ConfigMaps(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return container{}, wrap(err, "find container %s", ref)
	}
	name := strings.TrimPrefix(ref, "/")
	var byName, byID, byPrefix []int
	recs := make([]record, len(cms.Items))
	for i := range cms.Items {
		r, err := decodeRecord(&cms.Items[i])
		if err != nil {
			continue
		}
		recs[i] = r
		switch {
		case r.ID == ref:
			byID = append(byID, i)
		case r.Name == name:
			byName = append(byName, i)
		case strings.HasPrefix(r.ID, ref):
			byPrefix = append(byPrefix, i)
		}
	}
	var hit []int
	switch {
	case len(byID) > 0:
		hit = byID
	case len(byName) > 0:
		hit = byName
	default:
		hit = byPrefix
	}
	switch len(hit) {
	case 0:
		ws, err := b.findWorkload(ctx, ref)
		switch {
		case err != nil:
			return container{}, err
		case len(ws) == 1:
			return ws[0], nil
		case len(ws) > 1:
			return container{}, fmt.Errorf("container reference %q is ambiguous (%d containers match): %w", ref, len(ws), errdefs.ErrInvalidArgument)
		}
		return container{}, fmt.Errorf("no such container: %s: %w", ref, errdefs.ErrNotFound)
	case 1:
	default:
		return container{}, fmt.Errorf("container reference %q is ambiguous (%d containers match): %w", ref, len(hit), errdefs.ErrInvalidArgument)
	}
	c := container{cm: &cms.Items[hit[0]], rec: recs[hit[0]]}
	pod, err := b.core.Pods(b.cfg.namespace).Get(ctx, c.obj(), metav1.GetOptions{})
	switch {
	case err == nil:
		if ownedBy(pod, c.cm.UID) {
			c.pod = pod
		}
	case !apierrors.IsNotFound(err):
		return c, wrap(err, "get pod %s", c.obj())
	}
	return c, nil
}

// ownedBy reports whether a pod belongs to the record with uid (a pod of
// an earlier container under the same name may still be terminating).
func ownedBy(pod *corev1.Pod, uid types.UID) bool {
	for _, o := range pod.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// List returns the containers whose labels match every filter label:
// records and pods listed once each (the project and app filters are
// label selectors), the rest matched here.
func (b *Backend) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	cs, err := b.list(ctx, o.Labels)
	if err != nil {
		return nil, err
	}
	out := make([]backends.Container, 0, len(cs))
	for _, c := range cs {
		var h healthInfo
		if needsHealth(c.rec, c.pod) {
			h = b.healthOf(ctx, c.pod)
		}
		v := b.view(c.rec, c.pod, h)
		if !o.All && !v.Running() {
			continue
		}
		out = append(out, v.Container)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// list finds the containers whose labels match filter.
func (b *Backend) list(ctx context.Context, filter map[string]string) ([]container, error) {
	sel := labels.Set{labelManagedBy: managedBy}
	for _, k := range []string{backends.LabelProject, backends.ComposeProject} {
		if v, ok := filter[k]; ok && v != "" {
			sel[labelProject] = labelValue(v)
		}
	}
	for _, k := range []string{backends.LabelApp, backends.ComposeService} {
		if v, ok := filter[k]; ok && v != "" {
			sel[labelApp] = labelValue(v)
		}
	}
	recSel := labels.Merge(sel, labels.Set{labelKind: kindContainer})
	cms, err := b.core.ConfigMaps(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: recSel.String()})
	if err != nil {
		return nil, wrap(err, "list containers")
	}
	pods, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, wrap(err, "list pods")
	}
	byName := map[string]*corev1.Pod{}
	for i := range pods.Items {
		byName[pods.Items[i].Name] = &pods.Items[i]
	}
	var out []container
	for i := range cms.Items {
		cm := &cms.Items[i]
		r, err := decodeRecord(cm)
		if err != nil || !backends.MatchLabels(r.Labels, filter) {
			continue
		}
		c := container{cm: cm, rec: r}
		if p := byName[cm.Name]; p != nil && ownedBy(p, cm.UID) {
			c.pod = p
		}
		out = append(out, c)
	}
	var deps []appsv1.Deployment
	if b.cfg.controllers {
		// Stopped replicas are entries of their Deployment.
		depSel := labels.Set{}
		for _, k := range []string{labelProject, labelApp} {
			if v, ok := sel[k]; ok {
				depSel[k] = v
			}
		}
		if deps, err = b.listDeployments(ctx, depSel); err != nil {
			return nil, err
		}
	}
	ws := workloadContainers(pods.Items, reservedNumbers(deps))
	for i := range deps {
		ws = append(ws, stoppedContainers(&deps[i])...)
	}
	for _, c := range ws {
		if backends.MatchLabels(c.rec.Labels, filter) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Inspect returns one container's details.
func (b *Backend) Inspect(ctx context.Context, id string) (backends.ContainerDetails, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return backends.ContainerDetails{}, err
	}
	var h healthInfo
	if c.pod != nil && c.rec.Config.Healthcheck != nil {
		h = b.healthOf(ctx, c.pod)
	}
	d := b.view(c.rec, c.pod, h)
	if c.pod != nil {
		d.Config.Hostname = c.pod.Spec.Hostname
		if d.Config.Hostname == "" {
			d.Config.Hostname = c.pod.Name
		}
	}
	return d, nil
}

// podLabels are the pod's: identity and network membership.
func (c container) podLabels() map[string]string {
	l := c.rec.selectors("")
	maps.Copy(l, c.rec.PodLabels)
	return l
}
