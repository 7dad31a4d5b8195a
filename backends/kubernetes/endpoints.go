package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Well-known EndpointSlice labels.
const (
	serviceNameLabel = discoveryv1.LabelServiceName
	managedByLabel   = discoveryv1.LabelManagedBy
)

// publish makes a started container reachable: its names on each of its
// networks (one EndpointSlice per network, owned by the pod, so it goes
// with it), its published ports through the member NetworkPolicies, and
// in the nodeport and loadbalancer modes its app's Service.
func (b *Backend) publish(ctx context.Context, c container) error {
	p := c.pod
	if p.Status.PodIP == "" {
		return nil // finished before it got an address
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}
	for _, n := range c.rec.Networks {
		if err := b.putSlice(ctx, c, n, owner); err != nil {
			return err
		}
	}
	if len(c.rec.Ports) > 0 && len(c.rec.Networks) > 0 {
		if err := b.openPorts(ctx, c, owner); err != nil {
			return err
		}
	}
	if b.cfg.publish != PublishHostPort && len(c.rec.Ports) > 0 {
		return b.publishApp(ctx, c)
	}
	return nil
}

// names are what a container answers to on a network: the aliases (its
// service name first) and its container name, those that are DNS labels.
func names(c container, n netRef) []string {
	var out []string
	for _, a := range append(slices.Clone(n.Aliases), c.rec.Name) {
		if isDNSLabel(a) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func sliceName(pod string, n netRef) string { return dnsLabel(pod+"-"+n.Object, 253) }

func (b *Backend) putSlice(ctx context.Context, c container, n netRef, owner metav1.OwnerReference) error {
	p := c.pod
	ready := true
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: sliceName(p.Name, n),
			Labels: map[string]string{
				serviceNameLabel: n.Object, managedByLabel: managedBySlices, labelManagedBy: managedBy,
				labelID: idLabel(c.rec.ID),
			},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, name := range names(c, n) {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{p.Status.PodIP}, Hostname: ptr(name),
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: b.cfg.namespace, Name: p.Name, UID: p.UID},
		})
	}
	slices := b.disc.EndpointSlices(b.cfg.namespace)
	_, err := slices.Create(ctx, es, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var cur *discoveryv1.EndpointSlice
		if cur, err = slices.Get(ctx, es.Name, metav1.GetOptions{}); err == nil {
			es.ResourceVersion = cur.ResourceVersion
			_, err = slices.Update(ctx, es, metav1.UpdateOptions{})
		}
	}
	return wrap(err, "publish %s on network %s (EndpointSlice %s)", c.rec.Name, n.Network, es.Name)
}

// deleteSlices deletes the EndpointSlices cornus made that match sel.
func (b *Backend) deleteSlices(ctx context.Context, sel labels.Set) error {
	sel = labels.Merge(sel, labels.Set{managedByLabel: managedBySlices})
	list, err := b.disc.EndpointSlices(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return wrap(err, "list EndpointSlices")
	}
	for _, es := range list.Items {
		if err := b.disc.EndpointSlices(b.cfg.namespace).Delete(ctx, es.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "delete EndpointSlice %s", es.Name)
		}
	}
	return nil
}

// openPorts lets anyone reach a network member's published ports (the
// network policies admit only members).
func (b *Backend) openPorts(ctx context.Context, c container, owner metav1.OwnerReference) error {
	var ports []networkingv1.NetworkPolicyPort
	for _, p := range c.rec.Ports {
		proto, _ := protocol(p.Protocol)
		port := intstr.FromInt32(int32(p.ContainerPort))
		ports = append(ports, networkingv1.NetworkPolicyPort{Protocol: &proto, Port: &port})
	}
	name, sel := dnsLabel(c.pod.Name+"-published", 253), map[string]string{labelID: idLabel(c.rec.ID)}
	if c.cm == nil {
		// A workload's replicas share one policy, kept by their
		// ReplicaSet or Job: replacements are covered too.
		name, sel = dnsLabel(workloadName(c.rec.Project, c.rec.App)+"-published", 253), workloadSelector(c.rec.Project, c.rec.App)
		if ctl := metav1.GetControllerOf(c.pod); ctl != nil {
			owner = *ctl
		}
	}
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{labelManagedBy: managedBy, labelID: idLabel(c.rec.ID)},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: sel},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: ports}},
		},
	}
	_, err := b.netw.NetworkPolicies(b.cfg.namespace).Create(ctx, np, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return wrap(err, "open the published ports of %s (NetworkPolicy %s)", c.rec.Name, np.Name)
	}
	return nil
}

// appService is the name of an app's Service in the nodeport and
// loadbalancer modes.
func appService(project, app string) string { return dnsLabel(project+"-"+app, 63) }

// publishApp makes the app's NodePort or LoadBalancer Service for its
// published ports (a node port in range is kept, others are allocated),
// and records the ports it got.
func (b *Backend) publishApp(ctx context.Context, c container) error {
	typ := corev1.ServiceTypeNodePort
	if b.cfg.publish == PublishLoadBalancer {
		typ = corev1.ServiceTypeLoadBalancer
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: appService(c.rec.Project, c.rec.App), Labels: map[string]string{
			labelManagedBy: managedBy, labelProject: labelValue(c.rec.Project), labelApp: labelValue(c.rec.App),
		}},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{labelProject: labelValue(c.rec.Project), labelApp: labelValue(c.rec.App)},
		},
	}
	for _, p := range c.rec.Ports {
		proto, _ := protocol(p.Protocol)
		sp := corev1.ServicePort{
			Name:     fmt.Sprintf("%s-%d", proto, p.ContainerPort),
			Protocol: proto, Port: int32(p.HostPort), TargetPort: intstr.FromInt32(int32(p.ContainerPort)),
		}
		if p.HostPort >= 30000 && p.HostPort <= 32767 {
			sp.NodePort = int32(p.HostPort)
		}
		if sp.Port == 0 {
			sp.Port = int32(p.ContainerPort)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	svcs := b.core.Services(b.cfg.namespace)
	got, err := svcs.Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		got, err = svcs.Get(ctx, svc.Name, metav1.GetOptions{})
	}
	if err != nil {
		return wrap(err, "publish the ports of %s (Service %s)", c.rec.App, svc.Name)
	}
	if c.cm == nil {
		return nil // a workload's replicas report the ports of their template
	}
	return b.updateRecord(ctx, c, func(r *record) {
		for i, p := range r.Ports {
			for _, sp := range got.Spec.Ports {
				if sp.Name == fmt.Sprintf("%s-%d", mustProtocol(p.Protocol), p.ContainerPort) {
					r.Ports[i].HostPort = int(sp.NodePort)
				}
			}
		}
	})
}

func mustProtocol(p string) corev1.Protocol {
	proto, _ := protocol(p)
	return proto
}

// unpublishApp deletes the app's Service with its last container.
func (b *Backend) unpublishApp(ctx context.Context, rec record) error {
	if b.cfg.publish == PublishHostPort || len(rec.Ports) == 0 {
		return nil
	}
	left, err := b.list(ctx, map[string]string{"cornus.project": rec.Project, "cornus.app": rec.App})
	if err != nil || len(left) > 0 {
		return err
	}
	return b.deleteAppService(ctx, rec.Project, rec.App)
}

// deleteAppService deletes the app's Service of the nodeport and
// loadbalancer modes, if it has one.
func (b *Backend) deleteAppService(ctx context.Context, project, app string) error {
	if b.cfg.publish == PublishHostPort {
		return nil
	}
	err := b.core.Services(b.cfg.namespace).Delete(ctx, appService(project, app), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "delete Service of %s", app)
	}
	return nil
}

func intstrPort(n int) intstr.IntOrString { return intstr.FromInt32(int32(n)) }

var _ = strconv.Itoa
