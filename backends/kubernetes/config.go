package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Environment variables the backend reads (from the environ it is given).
const (
	EnvNamespace     = "CORNUS_K8S_NAMESPACE"
	EnvKubeconfig    = "KUBECONFIG"
	EnvPublish       = "CORNUS_K8S_PUBLISH"        // hostport (default), nodeport, loadbalancer
	EnvStorageClass  = "CORNUS_K8S_STORAGE_CLASS"  // PVC class; default: the cluster's default
	EnvVolumeSize    = "CORNUS_K8S_VOLUME_SIZE"    // PVC request; default 1Gi
	EnvClusterDomain = "CORNUS_K8S_CLUSTER_DOMAIN" // default cluster.local
	EnvLiveness      = "CORNUS_K8S_LIVENESS"       // "1": healthchecks are liveness probes too
	EnvNetworkPolicy = "CORNUS_K8S_NETWORK_POLICY" // enforced | unenforced: what the CNI does
	EnvStartTimeout  = "CORNUS_K8S_START_TIMEOUT"  // how long Start waits for a pod; default 2m
	// EnvWorkloads is how cornus's own front ends run an app: "controllers"
	// (the default: a Deployment, or a Job for a one-shot app; workload.go)
	// or "pods" (a pod per replica, as the Docker API proxy always does).
	EnvWorkloads = "CORNUS_K8S_WORKLOADS"
	// EnvUserNamespaces "1": the nodes run pods in user namespaces
	// (hostUsers: false), so /proc can be unmasked (systempaths=unconfined).
	EnvUserNamespaces = "CORNUS_K8S_USER_NAMESPACES"
	// EnvRemote "1" is the backend's remote mode (backends.RemoteModer):
	// `cornus serve` runs each replica's caretaker as a native sidecar in
	// its pod.
	EnvRemote = "CORNUS_K8S_REMOTE"
)

// Defaults.
const (
	DefaultNamespace     = "cornus"
	DefaultClusterDomain = "cluster.local"
	defaultVolumeSize    = "1Gi"
	defaultStartTimeout  = 2 * time.Minute
)

// Publish modes for published ports.
const (
	PublishHostPort     = "hostport"
	PublishNodePort     = "nodeport"
	PublishLoadBalancer = "loadbalancer"
)

// config is the backend's settings, read once from the environment.
type config struct {
	namespace     string
	publish       string
	storageClass  string
	volumeSize    resource.Quantity
	clusterDomain string
	liveness      bool
	networkPolicy string
	startTimeout  time.Duration
	userNS        bool
	controllers   bool // EnvWorkloads
	remote        bool // EnvRemote
}

func configFrom(env map[string]string) (config, error) {
	c := config{
		namespace:     or(env[EnvNamespace], DefaultNamespace),
		publish:       strings.ToLower(or(env[EnvPublish], PublishHostPort)),
		storageClass:  env[EnvStorageClass],
		clusterDomain: strings.Trim(or(env[EnvClusterDomain], DefaultClusterDomain), "."),
		liveness:      env[EnvLiveness] == "1" || env[EnvLiveness] == "true",
		networkPolicy: env[EnvNetworkPolicy],
		userNS:        env[EnvUserNamespaces] == "1" || env[EnvUserNamespaces] == "true",
		startTimeout:  defaultStartTimeout,
		remote:        env[EnvRemote] == "1",
	}
	switch strings.ToLower(env[EnvWorkloads]) {
	case "", "controllers":
		c.controllers = true
	case "pods":
	default:
		return c, fmt.Errorf("%s=%q: use controllers or pods: %w", EnvWorkloads, env[EnvWorkloads], errdefs.ErrInvalidArgument)
	}
	switch c.publish {
	case PublishHostPort, PublishNodePort, PublishLoadBalancer:
	default:
		return c, fmt.Errorf("%s=%q: use hostport, nodeport or loadbalancer: %w", EnvPublish, env[EnvPublish], errdefs.ErrInvalidArgument)
	}
	q, err := resource.ParseQuantity(or(env[EnvVolumeSize], defaultVolumeSize))
	if err != nil {
		return c, fmt.Errorf("%s=%q: %v: %w", EnvVolumeSize, env[EnvVolumeSize], err, errdefs.ErrInvalidArgument)
	}
	c.volumeSize = q
	if v := env[EnvStartTimeout]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a duration such as 2m: %w", EnvStartTimeout, v, errdefs.ErrInvalidArgument)
		}
		c.startTimeout = d
	}
	if msgs := validateLabelValue(c.namespace); len(msgs) > 0 || len(c.namespace) > 63 {
		return c, fmt.Errorf("%s=%q is not a namespace name: %w", EnvNamespace, c.namespace, errdefs.ErrInvalidArgument)
	}
	return c, nil
}

// restConfig finds the cluster: the pod's service account when cornus runs
// in a cluster, else KUBECONFIG (a list, as kubectl reads it), else
// ~/.kube/config.
func restConfig(env map[string]string) (*rest.Config, string, error) {
	if env["KUBERNETES_SERVICE_HOST"] != "" && env["KUBERNETES_SERVICE_PORT"] != "" {
		if _, err := os.Stat(filepath.Join(saDir, "token")); err == nil {
			cfg, err := rest.InClusterConfig()
			if err != nil {
				return nil, "", fmt.Errorf("in-cluster service account: %w", err)
			}
			return cfg, "the pod's service account", nil
		}
	}
	var paths []string
	for _, p := range filepath.SplitList(env[EnvKubeconfig]) {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		if home := or(env["HOME"], homeDir()); home != "" {
			if p := filepath.Join(home, ".kube", "config"); fileExists(p) {
				paths = []string{p}
			}
		}
	}
	if len(paths) == 0 {
		return nil, "", fmt.Errorf("no cluster to talk to: set %s to a kubeconfig file (or put one at ~/.kube/config, or run cornus in a pod with a service account): %w", EnvKubeconfig, errdefs.ErrUnavailable)
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: paths}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s=%s: %v: %w", EnvKubeconfig, strings.Join(paths, string(filepath.ListSeparator)), err, errdefs.ErrInvalidArgument)
	}
	return cfg, EnvKubeconfig + "=" + strings.Join(paths, string(filepath.ListSeparator)), nil
}

// saDir is where a pod's service account credentials are mounted.
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Option configures New.
type Option func(*options)

type options struct {
	environ []string
	rest    *rest.Config
}

// WithEnviron supplies the environment (KEY=VALUE) the backend reads its
// settings from: KUBECONFIG, CORNUS_K8S_* (config.go).
func WithEnviron(env []string) Option { return func(o *options) { o.environ = env } }

// WithRESTConfig connects with c instead of finding the cluster from the
// environment.
func WithRESTConfig(c *rest.Config) Option { return func(o *options) { o.rest = c } }
