package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// podBridgeIP is the test cluster node's address on its pod bridge
// (scripts/k8s.sh), where pods reach a server on the host.
const podBridgeIP = "10.244.0.1"

// inclusterRows (issue 28) times the 10-service project's up -d --wait and
// down through cornus serve installed in the cluster by its Helm chart
// (reached through its NodePort on 127.0.0.1, TLS with the chart's CA)
// against the same through a cornus serve on this host driving the same
// cluster (both in remote mode: a caretaker sidecar per replica; TLS in
// the cluster, plain HTTP on the host), both deploying into the chart's namespace, alternating which
// goes first. It also reports helm install to ready.
func (b bench) inclusterRows(runs int) {
	ns := fmt.Sprintf("cornus-bench-ic-%d", os.Getpid())
	defer b.bestEffort([]string{"KUBECONFIG=" + adminKubeconfig}, "kubectl", "delete", "namespace", ns, "--wait=true", "--timeout=5m")
	inCluster, installed, ok := b.installChart(ns)
	if !ok {
		return
	}
	// The host's server: the same cluster and namespace, as its admin, in
	// remote mode as the chart's (each replica's caretaker sidecar dials
	// it back, here on the pod bridge's address of this node).
	data := filepath.Join(b.dir, "incluster-host-data")
	tok := strings.TrimSpace(b.out(b.cornus, "token", "create", "--tokens-file", filepath.Join(data, "tokens"), "bench"))
	addr := freeAddr(podBridgeIP)
	srv := exec.Command(b.cornus, "serve", "--listen", addr, "--insecure-listen", "--tokens-file", filepath.Join(data, "tokens"))
	srv.Env = append(os.Environ(), "CORNUS_DATA_DIR="+data, "CORNUS_DEPLOY_BACKEND=kubernetes", "KUBECONFIG="+adminKubeconfig, "CORNUS_K8S_NAMESPACE="+ns,
		"CORNUS_K8S_REMOTE=1", "CORNUS_ADVERTISE_URL=http://"+addr)
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		fail(err)
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	host := []string{inCluster[0], inCluster[1], "CORNUS_SERVER=" + serverURLFrom(stderr), "CORNUS_TOKEN=" + tok}

	ten := func(env []string, project string, verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", project}, verb...)...)
		return time.Since(start)
	}
	defer b.bestEffort(inCluster, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-ic", "down")
	defer b.bestEffort(host, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-hs", "down")
	// Warm both, then measure.
	ten(inCluster, "bench-ic", "up", "-d", "--wait")
	ten(inCluster, "bench-ic", "down")
	ten(host, "bench-hs", "up", "-d", "--wait")
	ten(host, "bench-hs", "down")
	var upI, downI, upH, downH []time.Duration
	tools := []func(){
		func() {
			upI = append(upI, ten(inCluster, "bench-ic", "up", "-d", "--wait"))
			expectRunning("up -d --wait through the in-cluster server", b.runningOnKubernetes(adminKubeconfig, ns, "bench-ic"), 10)
			downI = append(downI, ten(inCluster, "bench-ic", "down"))
		},
		func() {
			upH = append(upH, ten(host, "bench-hs", "up", "-d", "--wait"))
			expectRunning("up -d --wait through the host's server", b.runningOnKubernetes(adminKubeconfig, ns, "bench-hs"), 10)
			downH = append(downH, ten(host, "bench-hs", "down"))
		},
	}
	for i := range runs {
		for k := range tools {
			tools[(i+k)%len(tools)]()
		}
	}
	fmt.Printf("cornus serve in the cluster (Helm chart, NodePort, TLS) vs cornus serve on this host (plain HTTP), both in remote mode (a caretaker sidecar per replica), same cluster and namespace, %d runs each, medians [min–max]; helm install to ready %.1f s:\n\n", runs, installed.Seconds())
	pair("up -d --wait (10 svc)", "in-cluster", upI, "host", upH, 1.1)
	pair("down (10 services)", "in-cluster", downI, "host", downH, 1.1)
	fmt.Println()
}

// installChart installs the chart into ns with this cornus as its image
// (imported into the node) and returns the client environment that
// reaches it (its first two entries make the cluster the client's own
// image store, as in the kubernetes lane: nothing is sent) and how long
// install took to ready; false when there is no helm.
func (b bench) installChart(ns string) ([]string, time.Duration, bool) {
	helmOut, err := exec.Command("scripts/helm.sh").Output()
	if err != nil {
		fmt.Printf("in-cluster rows skipped: no helm (scripts/helm.sh: %v)\n\n", err)
		return nil, 0, false
	}
	helm := strings.TrimSpace(string(helmOut))
	chart, err := filepath.Abs("charts/cornus") // the bench runs from the repository's root
	if err != nil {
		fail(err)
	}
	admin := []string{"KUBECONFIG=" + adminKubeconfig}
	kubectl := func(args ...string) string {
		return b.outEnv(admin, "kubectl", append([]string{"-n", ns}, args...)...)
	}
	archive := filepath.Join(b.dir, "cornus-image.tar")
	ref := strings.TrimSpace(b.out(b.cornus, "agent", "image", "-o", archive))
	b.mustEnv(nil, "ctr", "--address", "/run/cornus-k8s/containerd.sock", "--namespace", "k8s.io", "images", "import", archive)
	// The kubelet reports a node's images every 10 s: a server that reads
	// them (the host server's rows) must not look before.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(b.outEnv(admin, "kubectl", "get", "nodes", "-o", "jsonpath={..images[*].names}"), ref); {
		if time.Now().After(deadline) {
			fail(fmt.Errorf("no node lists %s a minute after its import", ref))
		}
		time.Sleep(500 * time.Millisecond)
	}
	repo, tag, _ := strings.Cut(ref, ":")
	start := time.Now()
	b.mustEnv(admin, helm, "install", "bench", chart, "--namespace", ns, "--create-namespace", "--wait", "--timeout", "5m",
		"--set", "image.repository="+repo, "--set", "image.tag="+tag, "--set", "service.type=NodePort",
		"--set", "podSecurityContext.runAsUser=0", "--set", "podSecurityContext.runAsNonRoot=false")
	installed := time.Since(start)
	secret := func(name, key string) string {
		v, err := base64.StdEncoding.DecodeString(kubectl("get", "secret", name, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}"))
		if err != nil {
			fail(fmt.Errorf("secret %s: %w", name, err))
		}
		return string(v)
	}
	ca := filepath.Join(b.dir, "incluster-ca.pem")
	if err := os.WriteFile(ca, []byte(secret("bench-cornus-tls", "ca.crt")), 0o600); err != nil {
		fail(err)
	}
	port := strings.TrimSpace(kubectl("get", "svc", "bench-cornus", "-o", "jsonpath={.spec.ports[0].nodePort}"))
	return []string{"CORNUS_DEPLOY_BACKEND=kubernetes", "KUBECONFIG=" + adminKubeconfig, "CORNUS_SERVER=https://127.0.0.1:" + port,
		"CORNUS_TOKEN=" + secret("bench-cornus-tokens", "token"), "CORNUS_SERVER_CA=" + ca}, installed, true
}
