package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The test cluster of scripts/k8s.sh: cornus's own account (the shipped
// Role, in namespace cornus) and the admin kubectl uses.
const (
	defaultKubeconfig = "/run/cornus-k8s/cornus.kubeconfig"
	adminKubeconfig   = "/run/cornus-k8s/admin.kubeconfig"
)

// kubernetesAnswers reports whether the test cluster answers, so that make
// bench adds the kubernetes rows only then.
func kubernetesAnswers(kubeconfig string) bool {
	if _, err := os.Stat(kubeconfig); err != nil {
		return false
	}
	return exec.Command("kubectl", "--kubeconfig", kubeconfig, "--request-timeout", "2s", "get", "--raw", "/readyz").Run() == nil
}

// kubernetesRows times up -d --wait and down of the 10-service project
// with cornus on the kubernetes backend against kubectl applying the same
// objects — cornus's own rendered manifests (cornus compose convert
// --format k8s) — and waiting with kubectl rollout status (down: kubectl
// delete with foreground cascading, which waits for the pods to end), on
// the same cluster in the same run, alternating which goes first. kubectl
// works in a namespace the bench creates and deletes.
func (b bench) kubernetesRows(kubeconfig string, runs int) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		fmt.Printf("kubernetes rows skipped: no kubectl\n")
		return
	}
	env := []string{"CORNUS_DEPLOY_BACKEND=kubernetes", "KUBECONFIG=" + kubeconfig,
		"CORNUS_DATA_DIR=" + filepath.Join(b.dir, "k8s-data")}
	manifests := filepath.Join(b.dir, "ten-k8s.yaml")
	rendered := b.outEnv(env, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-kc", "convert", "--format", "k8s")
	if err := os.WriteFile(manifests, []byte(rendered), 0o644); err != nil {
		fail(err)
	}
	ns := fmt.Sprintf("cornus-bench-%d", os.Getpid())
	kubectl := func(args ...string) {
		b.mustEnv(nil, "kubectl", append([]string{"--kubeconfig", adminKubeconfig, "-n", ns}, args...)...)
	}
	kubectl("create", "namespace", ns)
	defer kubectl("delete", "namespace", ns, "--wait=true", "--timeout=5m")

	cornusNS := os.Getenv("CORNUS_K8S_NAMESPACE") // where cornus deploys
	if cornusNS == "" {
		cornusNS = "cornus"
	}
	cornus := func(verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-k8s"}, verb...)...)
		return time.Since(start)
	}
	peerUp := func() time.Duration {
		start := time.Now()
		kubectl("apply", "-f", manifests)
		kubectl("rollout", "status", "deployment", "-l", "cornus.dev/project=bench-kc", "--timeout=5m")
		return time.Since(start)
	}
	peerDown := func() time.Duration {
		start := time.Now()
		kubectl("delete", "-f", manifests, "--cascade=foreground", "--wait=true", "--timeout=5m")
		return time.Since(start)
	}
	defer b.bestEffort(env, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-k8s", "down")
	// Warm both (images on the node, page cache), then clean.
	cornus("up", "-d", "--wait")
	cornus("down")
	peerUp()
	peerDown()
	var upC, downC, upK, downK []time.Duration
	tools := []func(){
		func() {
			upC = append(upC, cornus("up", "-d", "--wait"))
			expectRunning("cornus up -d --wait on kubernetes", b.runningOnKubernetes(kubeconfig, cornusNS, "bench-k8s"), 10)
			downC = append(downC, cornus("down"))
		},
		func() {
			upK = append(upK, peerUp())
			expectRunning("kubectl apply + rollout status", b.runningOnKubernetes(adminKubeconfig, ns, "bench-kc"), 10)
			downK = append(downK, peerDown())
		},
	}
	for i := range runs {
		for k := range tools {
			tools[(i+k)%len(tools)]()
		}
	}
	version := strings.TrimSpace(b.outEnv(nil, "kubectl", "--kubeconfig", adminKubeconfig, "version", "-o", "json"))
	if i := strings.Index(version, `"serverVersion"`); i >= 0 {
		if j := strings.Index(version[i:], `"gitVersion": "`); j >= 0 {
			v := version[i+j+len(`"gitVersion": "`):]
			version = v[:strings.IndexByte(v, '"')]
		}
	}
	fmt.Printf("cornus on kubernetes vs kubectl apply + rollout status of the same objects (cornus compose convert --format k8s), Kubernetes %s, %d runs each, medians [min–max]:\n\n", version, runs)
	kubectlRow("up -d --wait (10 svc)", upC, upK)
	kubectlRow("down (10 services)", downC, downK)
}

// kubectlRow shows cornus against kubectl.
func kubectlRow(name string, c, k []time.Duration) {
	mc, mk := median(c), median(k)
	fmt.Printf("  %-22s cornus %8.1f ms %s   kubectl %8.1f ms %s   ratio %.2fx\n",
		name, ms(mc), spread(c), ms(mk), spread(k), float64(mc)/float64(mk))
}
