package kubernetes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Create records a container: its ConfigMap (the pod to run, labels, the
// published ports chosen now) and, with secrets or configs, its files
// Secret. No pod exists until Start.
func (b *Backend) Create(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	if cs.Name == "" {
		return backends.Container{}, fmt.Errorf("create container: no name: %w", errdefs.ErrInvalidArgument)
	}
	if err := b.nameFree(ctx, cs.Name); err != nil {
		return backends.Container{}, err
	}
	id := newID()
	in := renderInput{cs: cs, id: id, name: podName(cs.Name, id), cfg: b.cfg}
	if err := b.ensurePullSecret(ctx, cs.PullAuth); err != nil {
		return backends.Container{}, fmt.Errorf("create %s: %w", cs.Name, err)
	}
	var err error
	if in.uid, in.gid, in.groups, err = b.resolveUser(ctx, cs); err != nil {
		return backends.Container{}, fmt.Errorf("create %s: %w", cs.Name, err)
	}
	if in.hostPorts, err = b.pickHostPorts(ctx, cs.Ports); err != nil {
		return backends.Container{}, fmt.Errorf("create %s: %w", cs.Name, err)
	}
	if in.volumes, err = b.volumeSources(ctx, cs); err != nil {
		return backends.Container{}, fmt.Errorf("create %s: %w", cs.Name, err)
	}
	r, err := render(in)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create %s: %w", cs.Name, err)
	}
	rec := r.rec
	rec.Pod, rec.PodLabels = r.pod, r.labels
	cm, err := rec.configMap(b.cfg.namespace, in.name)
	if err != nil {
		return backends.Container{}, err
	}
	cm, err = b.core.ConfigMaps(b.cfg.namespace).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		return backends.Container{}, wrap(err, "create container %s (ConfigMap %s)", cs.Name, in.name)
	}
	if len(r.files) > 0 {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: in.name, Labels: rec.selectors(""), OwnerReferences: []metav1.OwnerReference{ownerRef(cm)}},
			Data:       r.files,
		}
		if _, err := b.core.Secrets(b.cfg.namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			// Nothing half-made stays.
			_ = b.core.ConfigMaps(b.cfg.namespace).Delete(context.WithoutCancel(ctx), in.name, metav1.DeleteOptions{})
			return backends.Container{}, wrap(err, "create container %s (its secrets and configs, Secret %s)", cs.Name, in.name)
		}
	}
	b.event(ctx, container{cm: cm}.ref(b.cfg.namespace), rec, "create", nil)
	return b.view(rec, nil, healthInfo{}).Container, nil
}

// nameFree fails with Conflict when a container already has the name.
func (b *Backend) nameFree(ctx context.Context, name string) error {
	sel := labels.Set{labelKind: kindContainer, labelName: labelValue(name)}
	cms, err := b.core.ConfigMaps(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return wrap(err, "create %s", name)
	}
	for i := range cms.Items {
		if r, err := decodeRecord(&cms.Items[i]); err == nil && r.Name == name {
			return fmt.Errorf("create %s: the container name is already in use by container %s: %w", name, r.ID, errdefs.ErrConflict)
		}
	}
	return nil
}

func ownerRef(cm *corev1.ConfigMap) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
}

// pickHostPorts chooses the host port of each published port: its own, the
// first of its range no pod of the namespace uses, or for an ephemeral one
// (0) a random free-looking port (randomHostPort). The node may still hold
// the port for something else; the kubelet reports that when the pod starts.
func (b *Backend) pickHostPorts(ctx context.Context, ports []backends.PortMapping) ([]int, error) {
	if len(ports) == 0 {
		return nil, nil
	}
	used := map[string]bool{}
	need := false
	for _, p := range ports {
		need = need || p.HostPort == 0 || p.HostPortEnd > p.HostPort
	}
	if need {
		pods, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, wrap(err, "list pods for free host ports")
		}
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					if cp.HostPort != 0 {
						used[strconv.Itoa(int(cp.HostPort))+"/"+strings.ToLower(string(cp.Protocol))] = true
					}
				}
			}
		}
	}
	out := make([]int, len(ports))
	for i, p := range ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		switch {
		case p.HostPort == 0:
			for try := 0; ; try++ {
				port := randomHostPort()
				if !used[strconv.Itoa(port)+"/"+proto] || try > 100 {
					out[i] = port
					break
				}
			}
		case p.HostPortEnd > p.HostPort:
			out[i] = -1
			for port := p.HostPort; port <= p.HostPortEnd; port++ {
				if !used[strconv.Itoa(port)+"/"+proto] {
					out[i] = port
					break
				}
			}
			if out[i] < 0 {
				return nil, fmt.Errorf("ports: every host port of %d-%d/%s is taken: %w", p.HostPort, p.HostPortEnd, proto, errdefs.ErrConflict)
			}
		default:
			out[i] = p.HostPort
		}
		used[strconv.Itoa(out[i])+"/"+proto] = true
	}
	return out, nil
}

// randomHostPort is a port of 10000-29999 or 61000-65535: outside Linux's
// default ephemeral range (32768-60999) and NodePorts' (30000-32767). A
// hostPort is a DNAT on the node that holds no socket, so a port of the
// ephemeral range could later be handed to a node process binding port 0,
// whose traffic the pod would then take.
func randomHostPort() int {
	n := 10000 + rand.IntN(20000+4536)
	if n >= 30000 {
		n += 31000
	}
	return n
}

// volumeSources finds how each named volume the container mounts reaches
// a pod: its claim, or the host directory its driver options bind.
func (b *Backend) volumeSources(ctx context.Context, cs backends.ContainerSpec) (map[string]volumeSource, error) {
	out := map[string]volumeSource{}
	for _, v := range cs.Volumes {
		if v.Name == "" {
			continue
		}
		if _, done := out[v.Name]; done {
			continue
		}
		vol, err := b.volume(ctx, v.Name)
		if err != nil {
			return nil, err
		}
		if why := vol.source.unmountable; why != "" {
			return nil, fmt.Errorf("volume %s: %s: %w", v.Name, why, errdefs.ErrNotImplemented)
		}
		out[v.Name] = vol.source
	}
	return out, nil
}

// resolveUser turns the spec's user and groups into numbers: Kubernetes
// takes only numeric IDs, so names are looked up in the image's
// /etc/passwd and /etc/group (read by a one-off pod, as the runtime would
// when it starts the container).
func (b *Backend) resolveUser(ctx context.Context, cs backends.ContainerSpec) (uid, gid *int64, groups []int64, err error) {
	user, group, _ := strings.Cut(cs.User, ":")
	var names []string
	num := func(s string) (*int64, bool) {
		if s == "" {
			return nil, true
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			names = append(names, s)
			return nil, false
		}
		return &n, true
	}
	uid, uok := num(user)
	gid, gok := num(group)
	var gnames []string
	for _, g := range cs.GroupAdd {
		if n, err := strconv.ParseInt(g, 10, 64); err == nil && n >= 0 {
			groups = append(groups, n)
		} else {
			gnames = append(gnames, g)
		}
	}
	if uok && gok && len(gnames) == 0 {
		return uid, gid, groups, nil
	}
	db, err := b.imageAccounts(ctx, cs.Image, cs.PullAuth)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("user %q: Kubernetes needs numeric IDs, and the image's /etc/passwd could not be read to find them (%v): use user: UID[:GID]: %w", cs.User, err, errdefs.ErrInvalidArgument)
	}
	if !uok {
		u, ok := db.users[user]
		if !ok {
			return nil, nil, nil, fmt.Errorf("user %q: no such user in the image's /etc/passwd: %w", user, errdefs.ErrInvalidArgument)
		}
		uid = &u.uid
		if group == "" {
			gid = &u.gid
		}
	}
	if !gok {
		g, ok := db.groups[group]
		if !ok {
			return nil, nil, nil, fmt.Errorf("user %q: no such group %q in the image's /etc/group: %w", cs.User, group, errdefs.ErrInvalidArgument)
		}
		gid = &g
	}
	for _, name := range gnames {
		g, ok := db.groups[name]
		if !ok {
			return nil, nil, nil, fmt.Errorf("groupAdd %q: no such group in the image's /etc/group: %w", name, errdefs.ErrInvalidArgument)
		}
		groups = append(groups, g)
	}
	return uid, gid, groups, nil
}

// accounts are an image's users (uid, primary gid) and groups by name.
type accounts struct {
	users  map[string]struct{ uid, gid int64 }
	groups map[string]int64
}

// parseAccounts reads /etc/passwd and /etc/group lines (told apart by
// their number of fields: 7 and 4).
func parseAccounts(text string) accounts {
	a := accounts{users: map[string]struct{ uid, gid int64 }{}, groups: map[string]int64{}}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Split(strings.TrimSpace(l), ":")
		switch len(f) {
		case 7:
			u, err1 := strconv.ParseInt(f[2], 10, 64)
			g, err2 := strconv.ParseInt(f[3], 10, 64)
			if err1 == nil && err2 == nil {
				a.users[f[0]] = struct{ uid, gid int64 }{u, g}
			}
		case 4:
			if g, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				a.groups[f[0]] = g
			}
		}
	}
	return a
}

// imageAccounts reads an image's /etc/passwd and /etc/group with a one-off
// pod (cat from the image itself).
func (b *Backend) imageAccounts(ctx context.Context, image string, auth *spec.RegistryAuth) (accounts, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "cornus-accounts-",
			Labels:       map[string]string{labelManagedBy: managedBy, labelKind: kindProbe},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr(false), EnableServiceLinks: ptr(false),
			TerminationGracePeriodSeconds: ptr(int64(0)),
			Containers: []corev1.Container{{
				Name: "accounts", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"cat", "/etc/passwd", "/etc/group"},
			}},
			ImagePullSecrets: pullSecrets(auth),
		},
	}
	out, err := b.runOnce(ctx, pod)
	if err != nil && out == "" {
		return accounts{}, err
	}
	return parseAccounts(out), nil
}

// runOnce runs a one-off pod to completion and returns its output (and an
// error when it failed); the pod is deleted afterwards.
func (b *Backend) runOnce(ctx context.Context, pod *corev1.Pod) (string, error) {
	pods := b.core.Pods(b.cfg.namespace)
	p, err := pods.Create(ctx, pod.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		return "", wrap(err, "create a one-off pod")
	}
	defer func() {
		_ = pods.Delete(context.WithoutCancel(ctx), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	}()
	ctx, cancel := context.WithTimeout(ctx, b.cfg.startTimeout)
	defer cancel()
	for {
		p, err = pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return "", wrap(err, "one-off pod")
		}
		st := stateOf(p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			raw, lerr := pods.GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			if lerr != nil {
				return "", wrap(lerr, "read the one-off pod's output")
			}
			if p.Status.Phase == corev1.PodFailed {
				return string(raw), fmt.Errorf("exited with code %d: %s: %w", st.exitCode, strings.TrimSpace(string(raw)), errdefs.ErrUnknown)
			}
			return string(raw), nil
		case isStartFailure(st.waitingReason):
			return "", fmt.Errorf("%s: %s: %w", st.waitingReason, st.waitingMessage, errdefs.ErrUnknown)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("one-off pod %s: %w", p.Name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// isStartFailure reports a waiting reason that means the container will
// not start by itself.
func isStartFailure(reason string) bool {
	switch reason {
	case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError",
		"CreateContainerError", "RunContainerError", "PreCreateHookError", "PostStartHookError", "CreateContainerConfigErrorPending":
		return true
	}
	return false
}
