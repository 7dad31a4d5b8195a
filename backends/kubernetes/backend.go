package kubernetes

import (
	"context"
	"fmt"
	"sync"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/cornus-dev/cornus/backends"
)

// Name is the backend's name in CORNUS_DEPLOY_BACKEND (k8s is an alias).
const Name = "kubernetes"

// Backend runs cornus apps on a Kubernetes cluster, in one namespace.
type Backend struct {
	cfg    config
	rest   *rest.Config
	core   *coreClient
	disc   *discoveryClient
	netw   *networkingClient
	apps   *appsClient
	batch  *batchClient
	params runtime.ParameterCodec
	// source says where the connection came from, for error messages.
	source string

	mu     sync.Mutex
	images map[string]backends.Image // image probes' results, by reference
	// warnedPolicy: the NetworkPolicy enforcement note was printed.
	warnedPolicy bool
	// failed: why a pod cannot start, seen in its events (startup.go).
	failed map[string]string
}

// New connects to the cluster: the pod's service account when cornus runs
// in one, else KUBECONFIG, else ~/.kube/config; neither is an error naming
// KUBECONFIG. It checks the namespace exists (creating it when allowed).
func New(ctx context.Context, opts ...Option) (*Backend, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	env := envMap(o.environ)
	cfg, err := configFrom(env)
	if err != nil {
		return nil, err
	}
	rc, source := o.rest, "the given REST config"
	if rc == nil {
		if rc, source, err = restConfig(env); err != nil {
			return nil, fmt.Errorf("kubernetes backend: %w", err)
		}
	}
	rc = rest.CopyConfig(rc)
	// Client-side throttling would serialize a project's parallel starts.
	rc.QPS, rc.Burst = 100, 200
	rc.UserAgent = "cornus"
	b := &Backend{cfg: cfg, rest: rc, source: source, images: map[string]backends.Image{}}
	clients, err := newAPIClients(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes backend (%s): %w", source, err)
	}
	b.core, b.disc, b.netw, b.params = clients.core, clients.disc, clients.netw, clients.params
	b.apps, b.batch = clients.apps, clients.batch
	if err := b.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// ensureNamespace checks the namespace answers (every namespace holds the
// kube-root-ca.crt ConfigMap), creating it if missing and allowed.
func (b *Backend) ensureNamespace(ctx context.Context) error {
	ns := b.cfg.namespace
	_, err := b.core.ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		_, cerr := b.core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if cerr == nil || apierrors.IsAlreadyExists(cerr) {
			return nil
		}
		if apierrors.IsForbidden(cerr) {
			return fmt.Errorf("kubernetes backend (%s): namespace %q does not exist and this account may not create it: create it (kubectl create namespace %s) and apply `cornus k8s rbac`, or set %s: %w",
				b.source, ns, ns, EnvNamespace, errdefs.ErrNotFound)
		}
		return fmt.Errorf("kubernetes backend (%s): create namespace %s: %w", b.source, ns, translate(cerr))
	case apierrors.IsForbidden(err):
		// An account that may not read ConfigMaps here cannot run cornus.
		return fmt.Errorf("kubernetes backend (%s): %v: bind this account to cornus's Role in namespace %s (`cornus k8s rbac`): %w", b.source, err, ns, errdefs.ErrPermissionDenied)
	}
	return fmt.Errorf("kubernetes backend: cluster at %s (%s) unreachable: %v: %w", b.rest.Host, b.source, err, errdefs.ErrUnavailable)
}

// Name is the backend's name, Name.
func (b *Backend) Name() string { return Name }

// Close releases nothing: the clients hold no long-lived connections.
func (b *Backend) Close() error { return nil }

// Namespace is the namespace the backend works in.
func (b *Backend) Namespace() string { return b.cfg.namespace }

// RemoteMode reports whether EnvRemote turned remote mode on.
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }

// Capabilities reports what the backend supports (the package doc's matrix).
func (b *Backend) Capabilities() backends.Capabilities {
	c := capabilities(b.cfg)
	c.Features = backends.FeaturesOf(b)
	return c
}

func capabilities(cfg config) backends.Capabilities {
	c := backends.Capabilities{
		Gaps: map[string]string{
			"domainname":                  "the kernel domain name of a pod is not settable",
			"build":                       "the cluster's nodes pull every image from a registry: build through cornus serve (--server), whose registry they pull from, or build and push with your own tools",
			"ulimits":                     "Kubernetes sets no per-container rlimits (the node's apply)",
			"resources.limits.pids":       "a pod's PID limit is the node's (kubelet podPidsLimit)",
			"resources.reservations.pids": "Kubernetes has no PID reservation",
			"networkMode=none":            "every pod joins the cluster network (network modes container: and service: are refused: a pod cannot join another pod's network namespace; host is hostNetwork)",
			"dns":                         "a pod resolves through the cluster DNS, which does not forward to a pod's own servers: they are listed after it and asked only when it does not answer",
			"utsMode":                     "a pod shares the host's UTS namespace only with hostNetwork",
			"cgroupnsMode":                "the runtime picks the cgroup namespace (private on cgroup v2)",
			"devices":                     "devices reach pods through device plugins, not by path",
			"deviceCgroupRules":           "devices reach pods through device plugins, not by cgroup rules",
			"healthcheck.startInterval":   "a readiness probe has one period (a startupProbe would kill the container when the start period ends)",
			"restart.maxRetries":          "the kubelet restarts failing containers with back-off and no limit (a Job's backoffLimit deletes the pod and its exit status)",
			"secrets.uid":                 "Kubernetes mounts secrets owned by root (fsGroup sets only the group of all volumes)",
			"secrets.gid":                 "Kubernetes mounts secrets owned by root (fsGroup sets only the group of all volumes)",
			"configs.uid":                 "Kubernetes mounts configs owned by root (fsGroup sets only the group of all volumes)",
			"configs.gid":                 "Kubernetes mounts configs owned by root (fsGroup sets only the group of all volumes)",
			"tmpfs.mode":                  "a memory-backed emptyDir is always mode 0777",
			"networks.ipv4":               "the cluster's IPAM assigns pod addresses",
			"networks.ipv6":               "the cluster's IPAM assigns pod addresses",
			"logging":                     "the kubelet keeps container logs; no log drivers",
			"hooks.privileged":            "an exec in a pod has the container's own privileges (the API has no privileged exec): the hook runs with them",
		},
		Refused: map[string]string{
			"networkMode=container": "a pod cannot join another pod's network namespace",
			"networkMode=service":   "a pod cannot join another pod's network namespace",
		},
		NativeHealthcheck: true, // readiness probes
		Sidecars:          true, // a native sidecar in the replica's pod (sidecar.go)
	}
	if !cfg.controllers {
		c.Gaps["update"] = backends.GapUpdate
	}
	if !cfg.userNS {
		c.Gaps["securityOpt.systempaths"] = "Kubernetes unmasks /proc only for pods in a user namespace, which the nodes' runtime must support (set " + EnvUserNamespaces + "=1 where it does)"
	}
	return c
}

var _ backends.Backend = (*Backend)(nil)
