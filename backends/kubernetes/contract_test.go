package kubernetes

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
)

// testKubeconfig is the kubeconfig scripts/k8s.sh writes for cornus's
// service account, bound to exactly the chart's Role (charts/cornus/templates/rbac.yaml):
// the tests prove that Role is enough.
const testKubeconfig = "/run/cornus-k8s/cornus.kubeconfig"

// testEnviron points the backend at the test cluster unless KUBECONFIG is
// set.
func testEnviron() []string {
	env := os.Environ()
	if os.Getenv(EnvKubeconfig) == "" {
		env = append(env, EnvKubeconfig+"="+testKubeconfig)
	}
	return env
}

// newTestBackend connects to the test cluster, with env (NAME=value)
// added to the environment.
func newTestBackend(t *testing.T, env ...string) *Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, WithEnviron(append(testEnviron(), env...)))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a Kubernetes cluster is required under CI (scripts/k8s.sh starts one): %v", err)
		}
		t.Skipf("no Kubernetes cluster; start one with scripts/k8s.sh: %v", err)
	}
	return b
}

// TestContract runs the backend contract suite against a real cluster
// (issue 10), as cornus's namespaced service account, with apps as
// Deployments and Jobs (the default).
func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t) })
}

// TestContractPods runs it again with a pod per replica
// (CORNUS_K8S_WORKLOADS=pods, what the Docker API proxy always creates).
func TestContractPods(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backends.Backend { return newTestBackend(t, EnvWorkloads+"=pods") })
}
