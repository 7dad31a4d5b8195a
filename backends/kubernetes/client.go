package kubernetes

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The API clients are REST clients over a scheme of only the groups the
// backend uses. client-go's typed clients (and its gentype helpers)
// register every built-in API group through k8s.io/client-go/kubernetes/
// scheme: ~12 MB more binary for types cornus never sends or reads.

// apiScheme knows core/v1, discovery/v1, networking/v1, apps/v1 and
// batch/v1, plus the options types (ListOptions, DeleteOptions, ...) of
// each.
func apiScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, discoveryv1.AddToScheme, networkingv1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("kubernetes API scheme: %w", err)
		}
	}
	return s, nil
}

// apiClients are the REST clients of the groups the backend calls.
type apiClients struct {
	core   *coreClient
	disc   *discoveryClient
	netw   *networkingClient
	apps   *appsClient
	batch  *batchClient
	params runtime.ParameterCodec
}

func newAPIClients(rc *rest.Config) (apiClients, error) {
	s, err := apiScheme()
	if err != nil {
		return apiClients{}, err
	}
	codecs := serializer.NewCodecFactory(s)
	params := runtime.NewParameterCodec(s)
	group := func(gv schema.GroupVersion, prefix string) (*rest.RESTClient, error) {
		c := rest.CopyConfig(rc)
		c.GroupVersion = &gv
		c.APIPath = prefix
		c.NegotiatedSerializer = codecs.WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		return rest.RESTClientFor(c)
	}
	core, err := group(corev1.SchemeGroupVersion, "/api")
	if err != nil {
		return apiClients{}, err
	}
	disc, err := group(discoveryv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return apiClients{}, err
	}
	netw, err := group(networkingv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return apiClients{}, err
	}
	apps, err := group(appsv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return apiClients{}, err
	}
	batch, err := group(batchv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return apiClients{}, err
	}
	return apiClients{
		apps:   &appsClient{rc: apps, params: params},
		batch:  &batchClient{rc: batch, params: params},
		core:   &coreClient{rc: core, params: params},
		disc:   &discoveryClient{rc: disc, params: params},
		netw:   &networkingClient{rc: netw, params: params},
		params: params,
	}, nil
}

// coreClient is the core/v1 group.
type coreClient struct {
	rc     *rest.RESTClient
	params runtime.ParameterCodec
}

// RESTClient is the group's client, for subresources (exec, attach,
// portforward).
func (c *coreClient) RESTClient() rest.Interface { return c.rc }

func (c *coreClient) Pods(ns string) *podClient {
	return &podClient{objects[*corev1.Pod, *corev1.PodList]{c.rc, c.params, ns, "pods", newPod, newPodList}}
}
func (c *coreClient) ConfigMaps(ns string) objects[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return objects[*corev1.ConfigMap, *corev1.ConfigMapList]{c.rc, c.params, ns, "configmaps", func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} }}
}
func (c *coreClient) Secrets(ns string) objects[*corev1.Secret, *corev1.SecretList] {
	return objects[*corev1.Secret, *corev1.SecretList]{c.rc, c.params, ns, "secrets", func() *corev1.Secret { return &corev1.Secret{} }, func() *corev1.SecretList { return &corev1.SecretList{} }}
}
func (c *coreClient) Services(ns string) objects[*corev1.Service, *corev1.ServiceList] {
	return objects[*corev1.Service, *corev1.ServiceList]{c.rc, c.params, ns, "services", func() *corev1.Service { return &corev1.Service{} }, func() *corev1.ServiceList { return &corev1.ServiceList{} }}
}
func (c *coreClient) PersistentVolumeClaims(ns string) objects[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return objects[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]{c.rc, c.params, ns, "persistentvolumeclaims", func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} }, func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} }}
}
func (c *coreClient) Events(ns string) objects[*corev1.Event, *corev1.EventList] {
	return objects[*corev1.Event, *corev1.EventList]{c.rc, c.params, ns, "events", func() *corev1.Event { return &corev1.Event{} }, func() *corev1.EventList { return &corev1.EventList{} }}
}

// Namespaces and Nodes are cluster-scoped.
func (c *coreClient) Namespaces() objects[*corev1.Namespace, *corev1.NamespaceList] {
	return objects[*corev1.Namespace, *corev1.NamespaceList]{c.rc, c.params, "", "namespaces", func() *corev1.Namespace { return &corev1.Namespace{} }, func() *corev1.NamespaceList { return &corev1.NamespaceList{} }}
}
func (c *coreClient) Nodes() objects[*corev1.Node, *corev1.NodeList] {
	return objects[*corev1.Node, *corev1.NodeList]{c.rc, c.params, "", "nodes", func() *corev1.Node { return &corev1.Node{} }, func() *corev1.NodeList { return &corev1.NodeList{} }}
}

func newPod() *corev1.Pod         { return &corev1.Pod{} }
func newPodList() *corev1.PodList { return &corev1.PodList{} }

// podClient adds the log subresource.
type podClient struct {
	objects[*corev1.Pod, *corev1.PodList]
}

// GetLogs is the request for a pod's log.
func (p *podClient) GetLogs(name string, o *corev1.PodLogOptions) *rest.Request {
	return p.rc.Get().Namespace(p.ns).Resource("pods").Name(name).SubResource("log").VersionedParams(o, p.params)
}

// discoveryClient is the discovery.k8s.io/v1 group.
type discoveryClient struct {
	rc     *rest.RESTClient
	params runtime.ParameterCodec
}

func (c *discoveryClient) EndpointSlices(ns string) objects[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList] {
	return objects[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]{c.rc, c.params, ns, "endpointslices", func() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} }, func() *discoveryv1.EndpointSliceList { return &discoveryv1.EndpointSliceList{} }}
}

// networkingClient is the networking.k8s.io/v1 group.
type networkingClient struct {
	rc     *rest.RESTClient
	params runtime.ParameterCodec
}

func (c *networkingClient) NetworkPolicies(ns string) objects[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList] {
	return objects[*networkingv1.NetworkPolicy, *networkingv1.NetworkPolicyList]{c.rc, c.params, ns, "networkpolicies", func() *networkingv1.NetworkPolicy { return &networkingv1.NetworkPolicy{} }, func() *networkingv1.NetworkPolicyList { return &networkingv1.NetworkPolicyList{} }}
}

// appsClient is the apps/v1 group.
type appsClient struct {
	rc     *rest.RESTClient
	params runtime.ParameterCodec
}

func (c *appsClient) Deployments(ns string) objects[*appsv1.Deployment, *appsv1.DeploymentList] {
	return objects[*appsv1.Deployment, *appsv1.DeploymentList]{c.rc, c.params, ns, "deployments", func() *appsv1.Deployment { return &appsv1.Deployment{} }, func() *appsv1.DeploymentList { return &appsv1.DeploymentList{} }}
}

// batchClient is the batch/v1 group.
type batchClient struct {
	rc     *rest.RESTClient
	params runtime.ParameterCodec
}

func (c *batchClient) Jobs(ns string) objects[*batchv1.Job, *batchv1.JobList] {
	return objects[*batchv1.Job, *batchv1.JobList]{c.rc, c.params, ns, "jobs", func() *batchv1.Job { return &batchv1.Job{} }, func() *batchv1.JobList { return &batchv1.JobList{} }}
}

// objects is one resource of a group, in a namespace (or cluster-scoped
// with ns ""): the verbs of client-go's typed clients, same signatures.
type objects[T, L runtime.Object] struct {
	rc      rest.Interface
	params  runtime.ParameterCodec
	ns      string
	name    string
	newObj  func() T
	newList func() L
}

func (r objects[T, L]) req(verb func() *rest.Request) *rest.Request {
	return verb().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.name)
}

func (r objects[T, L]) Get(ctx context.Context, name string, o metav1.GetOptions) (T, error) {
	out := r.newObj()
	err := r.req(r.rc.Get).Name(name).VersionedParams(&o, r.params).Do(ctx).Into(out)
	return out, err
}

func (r objects[T, L]) List(ctx context.Context, o metav1.ListOptions) (L, error) {
	out := r.newList()
	req := r.req(r.rc.Get).VersionedParams(&o, r.params)
	if o.TimeoutSeconds != nil {
		req = req.Timeout(time.Duration(*o.TimeoutSeconds) * time.Second)
	}
	err := req.Do(ctx).Into(out)
	return out, err
}

func (r objects[T, L]) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	o.Watch = true
	req := r.req(r.rc.Get).VersionedParams(&o, r.params)
	if o.TimeoutSeconds != nil {
		req = req.Timeout(time.Duration(*o.TimeoutSeconds) * time.Second)
	}
	return req.Watch(ctx)
}

func (r objects[T, L]) Create(ctx context.Context, obj T, o metav1.CreateOptions) (T, error) {
	out := r.newObj()
	err := r.req(r.rc.Post).VersionedParams(&o, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (r objects[T, L]) Update(ctx context.Context, obj T, o metav1.UpdateOptions) (T, error) {
	out := r.newObj()
	name := ""
	if m, ok := any(obj).(metav1.Object); ok {
		name = m.GetName()
	}
	err := r.req(r.rc.Put).Name(name).VersionedParams(&o, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (r objects[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, subresources ...string) (T, error) {
	out := r.newObj()
	err := r.req(func() *rest.Request { return r.rc.Patch(pt) }).Name(name).SubResource(subresources...).
		VersionedParams(&o, r.params).Body(data).Do(ctx).Into(out)
	return out, err
}

func (r objects[T, L]) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	return r.req(r.rc.Delete).Name(name).Body(&o).Do(ctx).Error()
}
