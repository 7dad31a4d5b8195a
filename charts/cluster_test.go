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
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testnet"
)

// The test cluster scripts/k8s.sh runs: its admin kubeconfig, the node's
// containerd, where images are imported (there is no registry), and the
// directory of registry hosts that containerd trusts.
const (
	k8sState   = "/run/cornus-k8s"
	nodeImages = k8sState + "/containerd.sock"
	nodeHosts  = k8sState + "/certs.d"
)

// cluster is the chart installed on the test cluster, as its admin, and a
// developer's client logged in to the server it runs.
type cluster struct {
	t          *testing.T
	helm, bin  string // helm; the cornus binary under test
	kubeconfig string
	ns         string
	env        []string // the client's (HOME, CORNUS_SERVER_CA)
	release    string
	server     string // the chart's objects' name
	nodePort   int
	url, caPEM string
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

// compose runs `cornus compose --server URL -f FILE -p PROJECT ARGS`.
func (c *cluster) compose(file, project string, args ...string) string {
	c.t.Helper()
	return c.run(c.bin, append([]string{"compose", "--server", c.url, "-f", file, "-p", project}, args...)...)
}

// installChart builds this tree's cornus, imports its image into the
// node, installs the chart into a namespace of the test's own (removed at
// the end) with a NodePort Service on a port it chooses, and logs a
// client in through that port on 127.0.0.1 with the chart's own CA.
func installChart(t *testing.T, set ...string) *cluster {
	admin := filepath.Join(k8sState, "admin.kubeconfig")
	if _, err := os.Stat(admin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test cluster is required under CI (scripts/k8s.sh): %v", err)
		}
		t.Skipf("no test cluster (scripts/k8s.sh starts it): %v", err)
	}
	c := &cluster{t: t, helm: helm(t), kubeconfig: admin, release: "e2e", server: "e2e-cornus"}
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
			out, _ = c.try("kubectl", "-n", c.ns, "logs", "--tail=200", "deployment/"+c.server)
			t.Logf("the server's log:\n%s", out)
		}
		// The namespace holds what the test made (its PVCs' volumes go
		// with them: the StorageClass deletes them).
		if out, err := c.try("kubectl", "delete", "namespace", c.ns, "--wait=true", "--timeout=3m"); err != nil {
			t.Errorf("delete namespace %s: %v\n%s", c.ns, err, out)
		}
	})
	c.install(append([]string{"image.repository=" + repo, "image.tag=" + tag, "service.type=NodePort",
		// The test cluster's hostPath volumes ignore fsGroup: the server
		// runs as their owner there.
		"podSecurityContext.runAsUser=0", "podSecurityContext.runAsNonRoot=false"}, set...))

	c.url = fmt.Sprintf("https://127.0.0.1:%d", c.nodePort)
	ca := filepath.Join(home, "ca.pem")
	c.caPEM = c.secret(c.server+"-tls", "ca.crt")
	if err := os.WriteFile(ca, []byte(c.caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env = append(c.env, "CORNUS_SERVER_CA="+ca)
	c.waitReachable()
	login := exec.Command(c.bin, "login", c.url)
	login.Env, login.Stdin = append(os.Environ(), c.env...), strings.NewReader(c.secret(c.server+"-tokens", "token"))
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("cornus login: %v\n%s", err, out)
	}
	return c
}

// install runs helm install with a node port of the test's choosing (the
// registry's address on the node derives from it), choosing another
// while the one chosen is taken.
func (c *cluster) install(set []string) {
	c.t.Helper()
	for try := 0; ; try++ {
		c.nodePort = 30000 + mrand.IntN(2768)
		args := []string{"install", c.release, "./cornus", "--namespace", c.ns, "--create-namespace", "--wait", "--timeout", "3m",
			"--set", fmt.Sprintf("service.nodePort=%d", c.nodePort)}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		start := time.Now()
		out, err := c.try(c.helm, args...)
		if err == nil {
			c.t.Logf("helm install to ready: %.1f s", time.Since(start).Seconds())
			return
		}
		if !strings.Contains(out, "provided port is already allocated") || try == 5 {
			c.t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		_, _ = c.try(c.helm, "uninstall", c.release, "--namespace", c.ns, "--wait")
	}
}

// background runs `cornus ARGS(port)` (a port-forward or tunnel on a free
// loopback port) until the test's end, and waits for curl ARGS(port) to
// read web's page through it.
func (c *cluster) background(what, service string, args func(port int) []string, curl func(port int) []string) {
	t := c.t
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

// probe GETs a path of the server through the NodePort, trusting the
// chart's CA.
func (c *cluster) probe(path string) (int, string, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.caPEM)) {
		return 0, "", fmt.Errorf("the chart's ca.crt holds no certificate")
	}
	cl := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := cl.Get(c.url + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, err = body.ReadFrom(resp.Body)
	return resp.StatusCode, body.String(), err
}

// waitReachable waits for the server's readiness through the NodePort:
// the Service's endpoints follow a restarted pod a moment after it is
// ready.
func (c *cluster) waitReachable() {
	c.t.Helper()
	var last error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		code, body, err := c.probe("/readyz")
		if err == nil && code == http.StatusOK {
			return
		}
		if err == nil {
			err = fmt.Errorf("/readyz: %d %s", code, body)
		}
		last = err
	}
	c.t.Fatalf("server %s not ready: %v", c.url, last)
}

// restarts is the server pod's container restarts (none: no crash loop).
func (c *cluster) restarts() string {
	c.t.Helper()
	return c.kubectl("get", "pods", "-l", "app.kubernetes.io/instance="+c.release,
		"-o", "jsonpath={.items[*].status.containerStatuses[*].restartCount}")
}

// writeFile writes a test file or fails the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
