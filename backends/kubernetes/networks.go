package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// A Compose network is a headless Service without a selector, named after
// the network, plus a NetworkPolicy letting only its members reach each
// other. Its members' names resolve through the cluster DNS: cornus keeps
// an EndpointSlice per member pod whose endpoints carry the container's
// names (service name, aliases, container name) as hostnames, so
// NAME.<network>.<namespace>.svc.<cluster domain> is the pod's address,
// and each member pod searches its networks' domains, so NAME alone
// resolves, as on a Docker network (endpoints.go).

// EnsureNetwork returns the project network, creating it if missing.
// External networks must exist.
func (b *Backend) EnsureNetwork(ctx context.Context, n backends.NetworkSpec) (backends.Network, error) {
	name := n.RuntimeName()
	obj := netObjectName(name)
	svcs := b.core.Services(b.cfg.namespace)
	if svc, err := svcs.Get(ctx, obj, metav1.GetOptions{}); err == nil {
		return networkOf(svc), nil
	} else if !apierrors.IsNotFound(err) {
		return backends.Network{}, wrap(err, "network %s", name)
	}
	if n.Network.External {
		return backends.Network{}, fmt.Errorf("external network %s not found (no Service %s in namespace %s): create it first: %w", name, obj, b.cfg.namespace, errdefs.ErrNotFound)
	}
	all := map[string]string{}
	for k, v := range n.Network.Labels {
		all[k] = v
	}
	for k, v := range n.Labels {
		all[k] = v
	}
	lj, err := json.Marshal(all)
	if err != nil {
		return backends.Network{}, fmt.Errorf("network %s: %w", name, err)
	}
	sel := map[string]string{labelManagedBy: managedBy, labelKind: kindNetwork, labelNetwork: labelValue(n.Key)}
	if n.Project != "" {
		sel[labelProject] = labelValue(n.Project)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: obj, Labels: sel, Annotations: map[string]string{annNetwork: name, annLabels: string(lj)}},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true},
	}
	created, err := svcs.Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // a concurrent apply made it
		created, err = svcs.Get(ctx, obj, metav1.GetOptions{})
	}
	if err != nil {
		return backends.Network{}, wrap(err, "create network %s (Service %s)", name, obj)
	}
	if err := b.isolate(ctx, created, n.Network); err != nil {
		return backends.Network{}, err
	}
	return networkOf(created), nil
}

// isolate makes the network's NetworkPolicy: its members accept traffic
// from members (a pod on several networks from each of them; published
// ports are opened per pod). An internal network also keeps its members
// from reaching anything but members and DNS.
func (b *Backend) isolate(ctx context.Context, svc *corev1.Service, n spec.Network) error {
	member := metav1.LabelSelector{MatchLabels: map[string]string{netLabelPrefix + svc.Name: "1"}}
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name, Labels: svc.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: member,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &member}}}},
		},
	}
	if n.Internal {
		udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
		dns := intstrPort(53)
		np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{
			{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &member}}},
			{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}}},
		}
	}
	_, err := b.netw.NetworkPolicies(b.cfg.namespace).Create(ctx, np, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return wrap(err, "create network %s (NetworkPolicy %s)", svc.Annotations[annNetwork], svc.Name)
	}
	b.notePolicy(svc.Annotations[annNetwork])
	return nil
}

// notePolicy says once per process that isolation depends on the CNI,
// which cornus cannot see from a namespace, unless the operator said.
func (b *Backend) notePolicy(network string) {
	if b.cfg.networkPolicy == "enforced" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.warnedPolicy {
		return
	}
	b.warnedPolicy = true
	msg := "isolates network %s only where the cluster's network plugin enforces NetworkPolicies, which cornus cannot see from a namespace (set %s=enforced to say it does)"
	if b.cfg.networkPolicy == "unenforced" {
		msg = "does not isolate network %s: this cluster's network plugin does not enforce NetworkPolicies (%s=unenforced): every pod of the namespace can reach its members"
	}
	fmt.Fprintf(os.Stderr, "WARN kubernetes backend: the NetworkPolicy "+msg+"\n", network, EnvNetworkPolicy)
}

func networkOf(svc *corev1.Service) backends.Network {
	n := backends.Network{
		ID: svc.Name, Name: svc.Annotations[annNetwork], Driver: "kubernetes", Created: svc.CreationTimestamp.Time,
		Labels: map[string]string{},
	}
	if n.Name == "" {
		n.Name = svc.Name
	}
	_ = json.Unmarshal([]byte(svc.Annotations[annLabels]), &n.Labels)
	return n
}

// ListNetworks returns the networks whose labels match, with their
// member containers.
func (b *Backend) ListNetworks(ctx context.Context, o backends.ListOptions) ([]backends.Network, error) {
	sel := labels.Set{labelManagedBy: managedBy, labelKind: kindNetwork}
	for _, k := range []string{backends.ComposeProject, backends.LabelProject} {
		if v := o.Labels[k]; v != "" {
			sel[labelProject] = labelValue(v)
		}
	}
	svcs, err := b.core.Services(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, wrap(err, "list networks")
	}
	var out []backends.Network
	var cs []container
	for i := range svcs.Items {
		if svcs.Items[i].DeletionTimestamp != nil {
			continue
		}
		n := networkOf(&svcs.Items[i])
		if !backends.MatchLabels(n.Labels, o.Labels) {
			continue
		}
		if cs == nil {
			if cs, err = b.list(ctx, nil); err != nil {
				return nil, err
			}
		}
		n.Containers = map[string]backends.EndpointInfo{}
		for _, c := range cs {
			for _, r := range c.rec.Networks {
				if r.Object == n.ID {
					ep := backends.EndpointInfo{NetworkID: n.ID, Aliases: r.Aliases}
					if c.pod != nil {
						ep.IPAddress, ep.IPPrefixLen = c.pod.Status.PodIP, 32
					}
					n.Containers[c.rec.ID] = ep
				}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// RemoveNetwork deletes a network (by ID or name) nothing is attached to.
func (b *Backend) RemoveNetwork(ctx context.Context, id string) error {
	obj := netObjectName(id)
	svcs := b.core.Services(b.cfg.namespace)
	svc, err := svcs.Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		svc, err = svcs.Get(ctx, obj, metav1.GetOptions{})
	}
	if err != nil {
		return wrap(err, "remove network %s", id)
	}
	if svc.Labels[labelKind] != kindNetwork {
		return fmt.Errorf("remove network %s: Service %s is not a cornus network: %w", id, svc.Name, errdefs.ErrNotFound)
	}
	cs, err := b.list(ctx, nil)
	if err != nil {
		return err
	}
	for _, c := range cs {
		for _, r := range c.rec.Networks {
			if r.Object == svc.Name && c.pod != nil && stateOf(c.pod).state != backends.StateExited {
				return fmt.Errorf("remove network %s: container %s is still attached: %w", id, c.rec.Name, errdefs.ErrConflict)
			}
		}
	}
	bg := metav1.DeletePropagationBackground
	if err := svcs.Delete(ctx, svc.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "remove network %s", id)
	}
	if err := b.netw.NetworkPolicies(b.cfg.namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "remove network %s (NetworkPolicy)", id)
	}
	return b.deleteSlices(ctx, labels.Set{serviceNameLabel: svc.Name})
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
