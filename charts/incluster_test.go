//go:build linux

package charts

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"
)

// The test cluster scripts/k8s.sh runs: its admin kubeconfig and the
// node's containerd, where images are imported (there is no registry).
const (
	k8sState   = "/run/cornus-k8s"
	nodeImages = k8sState + "/containerd.sock"
)

// cluster is one run against the test cluster as its admin.
type cluster struct {
	t          *testing.T
	helm, bin  string // helm; the cornus binary under test
	kubeconfig string
	ns         string
	env        []string // the client's (HOME, CORNUS_SERVER_CA)
}

func (c *cluster) run(name string, args ...string) string {
	c.t.Helper()
	out, err := c.try(name, args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cluster) try(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), append([]string{"KUBECONFIG=" + c.kubeconfig}, c.env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (c *cluster) kubectl(args ...string) string {
	c.t.Helper()
	return c.run("kubectl", append([]string{"-n", c.ns}, args...)...)
}

// Issue 28: the chart installs cornus serve into the real cluster, where
// it runs as its service account (no kubeconfig); from this host, as a
// developer would, `cornus login` and `cornus compose --server` reach it
// through the Service's NodePort (on 127.0.0.1) with the chart's own CA,
// deploy a two-service project into the cluster, read its logs and exec
// into it; `helm upgrade` restarts the server and keeps the detached
// deployment; `helm uninstall` leaves the data volume (kept by default)
// and nothing else.
func TestInCluster(t *testing.T) {
	admin := filepath.Join(k8sState, "admin.kubeconfig")
	if _, err := os.Stat(admin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test cluster is required under CI (scripts/k8s.sh): %v", err)
		}
		t.Skipf("no test cluster (scripts/k8s.sh starts it): %v", err)
	}
	c := &cluster{t: t, helm: helm(t), kubeconfig: admin}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	c.ns = "cornus-helm-" + hex.EncodeToString(suffix)
	home := t.TempDir()
	c.env = []string{"HOME=" + home, "CORNUS_SERVER=", "CORNUS_DEPLOY_BACKEND="}

	// The image: this tree's binary, static, imported into the node.
	c.bin = filepath.Join(t.TempDir(), "cornus")
	build := exec.Command("go", "build", "-trimpath", "-o", c.bin, "../cmd/cornus")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build cornus: %v\n%s", err, out)
	}
	archive := filepath.Join(t.TempDir(), "cornus.tar")
	ref := strings.TrimSpace(c.run(c.bin, "agent", "image", "-o", archive))
	repo, tag, _ := strings.Cut(ref, ":")
	c.run("ctr", "--address", nodeImages, "--namespace", "k8s.io", "images", "import", archive)
	t.Cleanup(func() {
		_, _ = c.try("ctr", "--address", nodeImages, "--namespace", "k8s.io", "images", "rm", "docker.io/library/"+ref)
	})

	t.Cleanup(func() {
		if t.Failed() {
			out, _ := c.try("kubectl", "-n", c.ns, "describe", "pods")
			t.Logf("pods of %s:\n%s", c.ns, out)
		}
		// The namespace holds what the test made (its PVCs' volumes go
		// with them: the StorageClass deletes them).
		if out, err := c.try("kubectl", "delete", "namespace", c.ns, "--wait=true", "--timeout=3m"); err != nil {
			t.Errorf("delete namespace %s: %v\n%s", c.ns, err, out)
		}
	})
	const release = "e2e"
	start := time.Now()
	c.run(c.helm, "install", release, "./cornus", "--namespace", c.ns, "--create-namespace", "--wait", "--timeout", "3m",
		"--set", "image.repository="+repo, "--set", "image.tag="+tag, "--set", "service.type=NodePort",
		// The test cluster's hostPath volumes ignore fsGroup: the server
		// runs as their owner there.
		"--set", "podSecurityContext.runAsUser=0", "--set", "podSecurityContext.runAsNonRoot=false")
	t.Logf("helm install to ready: %.1f s", time.Since(start).Seconds())

	server := "e2e-cornus"
	port := c.kubectl("get", "svc", server, "-o", "jsonpath={.spec.ports[0].nodePort}")
	url := "https://127.0.0.1:" + port
	ca, caPEM := filepath.Join(home, "ca.pem"), c.secret(server+"-tls", "ca.crt")
	if err := os.WriteFile(ca, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env = append(c.env, "CORNUS_SERVER_CA="+ca)
	c.waitReachable(url, caPEM)
	token := c.secret(server+"-tokens", "token")
	login := exec.Command(c.bin, "login", url)
	login.Env, login.Stdin = append(os.Environ(), c.env...), strings.NewReader(token)
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("cornus login: %v\n%s", err, out)
	}

	dir := t.TempDir()
	compose := `services:
  web:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo hello-from-web > /tmp/index.html; httpd -f -p 8080 -h /tmp"]
  worker:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo worker-started; sleep 3600"]
    depends_on: [web]
`
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(compose), 0o644); err != nil {
		t.Fatal(err)
	}
	cornus := func(args ...string) string {
		t.Helper()
		return c.run(c.bin, append([]string{"compose", "--server", url, "-f", filepath.Join(dir, "compose.yaml"), "-p", "incluster"}, args...)...)
	}
	cornus("up", "-d", "--wait")
	if out := cornus("exec", "worker", "wget", "-qO-", "http://web:8080/"); !strings.Contains(out, "hello-from-web") {
		t.Errorf("worker could not reach web through the cluster's network: %q", out)
	}
	if out := cornus("logs", "worker"); !strings.Contains(out, "worker-started") {
		t.Errorf("logs of worker: %q", out)
	}
	if out := c.kubectl("get", "pods", "-l", "app.kubernetes.io/name!=cornus", "-o", "name"); strings.Count(out, "pod/") < 2 {
		t.Errorf("the project's pods are not in %s:\n%s", c.ns, out)
	}
	composeFile := filepath.Join(dir, "compose.yaml")
	c.background(t, "port-forward", "web", func(port int) []string {
		return []string{"port-forward", "--server", url, "-f", composeFile, "-p", "incluster", "web", fmt.Sprintf("%d:8080", port)}
	}, func(port int) []string { return []string{fmt.Sprintf("http://127.0.0.1:%d/", port)} })
	c.background(t, "tunnel", "web", func(port int) []string {
		return []string{"tunnel", "--server", url, "-f", composeFile, "-p", "incluster", "--listen", fmt.Sprintf("127.0.0.1:%d", port)}
	}, func(port int) []string {
		return []string{"--socks5-hostname", fmt.Sprintf("127.0.0.1:%d", port), "http://web:8080/"}
	})

	// The server's pod deleted mid-session: its Deployment makes another,
	// and the session (its agent redialing) keeps the deployment.
	c.kubectl("delete", "pod", "-l", "app.kubernetes.io/instance="+release, "--wait=true")
	c.kubectl("rollout", "status", "deployment/"+server, "--timeout=3m")
	c.waitReachable(url, caPEM)
	if out := cornus("exec", "worker", "wget", "-qO-", "http://web:8080/"); !strings.Contains(out, "hello-from-web") {
		t.Errorf("after the server's pod was deleted, worker reached web: %q", out)
	}

	// An upgrade that changes the server's pod: it restarts; the detached
	// deployment goes on.
	c.run(c.helm, "upgrade", release, "./cornus", "--namespace", c.ns, "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "podAnnotations.e2e/upgraded=yes")
	c.waitReachable(url, caPEM)
	if out := cornus("ps"); strings.Count(out, "Up ") != 2 {
		t.Errorf("after helm upgrade, ps:\n%s", out)
	}
	if out := cornus("exec", "worker", "wget", "-qO-", "http://web:8080/"); !strings.Contains(out, "hello-from-web") {
		t.Errorf("after helm upgrade, worker reached web: %q", out)
	}
	cornus("down")

	// Uninstall leaves the data volume and nothing else of the chart's.
	c.run(c.helm, "uninstall", release, "--namespace", c.ns, "--wait", "--timeout", "3m")
	// (The server's pod goes a moment after its Deployment.)
	var got []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		got = strings.Fields(c.kubectl("get", "deployments,services,secrets,serviceaccounts,roles,rolebindings,pvc,pods",
			"-l", "app.kubernetes.io/instance="+release, "-o", "name"))
		if len(got) == 1 && got[0] == "persistentvolumeclaim/"+server+"-data" || time.Now().After(deadline) {
			break
		}
	}
	if len(got) != 1 || got[0] != "persistentvolumeclaim/"+server+"-data" {
		t.Errorf("after helm uninstall %s holds %q, want only the data volume", c.ns, got)
	}
}

// background runs `cornus ARGS(port)` (a port-forward or tunnel on a free
// loopback port) until the test's end, and waits for curl ARGS(port) to
// read web's page through it.
func (c *cluster) background(t *testing.T, what, service string, args func(port int) []string, curl func(port int) []string) {
	t.Helper()
	port := testnet.FreePort(t)
	cmd := exec.Command(c.bin, args(port)...)
	cmd.Env = append(os.Environ(), c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		got, _ := exec.Command("curl", append([]string{"-sf", "--max-time", "3"}, curl(port)...)...).Output()
		if strings.Contains(string(got), "hello-from-web") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s to %s through the in-cluster server: no page in 30 s (%q)\n%s", what, service, got, out.String())
			return
		}
	}
}

// secret reads one key of a Secret of the test's namespace.
func (c *cluster) secret(name, key string) string {
	c.t.Helper()
	out := c.kubectl("get", "secret", name, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}")
	b, err := base64.StdEncoding.DecodeString(out)
	if err != nil {
		c.t.Fatalf("secret %s key %s: %v", name, key, err)
	}
	return string(b)
}

// waitReachable waits for the server's readiness through the NodePort,
// trusting the chart's CA: the Service's endpoints follow a restarted
// pod a moment after it is ready.
func (c *cluster) waitReachable(url, caPEM string) {
	c.t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(caPEM)) {
		c.t.Fatal("the chart's ca.crt holds no certificate")
	}
	cl := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		resp, err := cl.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("/readyz: %s", resp.Status)
		}
		last = err
	}
	c.t.Fatalf("server %s not ready: %v", url, last)
}
