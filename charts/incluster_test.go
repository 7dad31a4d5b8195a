//go:build linux

package charts

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// Issue 28: the chart installs cornus serve into the real cluster, where
// it runs as its service account (no kubeconfig); from this host, as a
// developer would, `cornus login` and `cornus compose --server` reach it
// through the Service's NodePort (on 127.0.0.1) with the chart's own CA.
// An image the client loads goes to the server's registry and the node
// pulls it from there; a three-service project runs, its logs and exec,
// port-forward and tunnel work; a client-local mount and the client's
// egress end reach the workload through the in-cluster server's relay.
// The server's pod deleted mid-session: a session whose client is gone is
// removed after the grace, the detached deployment stays; `helm upgrade`
// keeps it too; `helm uninstall` leaves the data volume (kept by default)
// and nothing else.
func TestInCluster(t *testing.T) {
	c := installChart(t, "backendEnv.CORNUS_SESSION_GRACE=20s") // past the new pod's readiness and the agents' redial
	sfx := make([]byte, 3)
	_, _ = rand.Read(sfx)
	id := hex.EncodeToString(sfx)
	appImage := c.loadThroughServer(id)

	dir := t.TempDir()
	file := filepath.Join(dir, "compose.yaml")
	writeFile(t, file, fmt.Sprintf(`services:
  web:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo hello-from-web > /tmp/index.html; httpd -f -p 8080 -h /tmp"]
  worker:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "echo worker-started; sleep 3600"]
    depends_on: [web]
  app:
    image: %s
    command: ["sh", "-c", "cat /hello; sleep 3600"]
`, appImage))
	c.compose(file, "incluster", "up", "-d", "--wait")
	if out := c.compose(file, "incluster", "logs", "app"); !strings.Contains(out, "pulled-from-the-server-"+id) {
		t.Errorf("app, whose image the node pulled from the server's registry, logged %q", out)
	}
	if out := c.run("ctr", "--address", nodeImages, "--namespace", "k8s.io", "images", "ls", "-q"); !strings.Contains(out, fmt.Sprintf("127.0.0.1:%d/", c.nodePort)) {
		t.Errorf("the node holds no image pulled from the server's registry at 127.0.0.1:%d:\n%s", c.nodePort, out)
	}
	if out := c.compose(file, "incluster", "exec", "worker", "wget", "-qO-", "http://web:8080/"); !strings.Contains(out, "hello-from-web") {
		t.Errorf("worker could not reach web through the cluster's network: %q", out)
	}
	if out := c.compose(file, "incluster", "logs", "worker"); !strings.Contains(out, "worker-started") {
		t.Errorf("logs of worker: %q", out)
	}
	if out := c.kubectl("get", "pods", "-l", "cornus.dev/project=incluster", "-o", "name"); strings.Count(out, "pod/") != 3 {
		t.Errorf("the project's pods are not in %s:\n%s", c.ns, out)
	}
	c.background("port-forward", "web", func(port int) []string {
		return []string{"port-forward", "--server", c.url, "-f", file, "-p", "incluster", "web", fmt.Sprintf("%d:8080", port)}
	}, func(port int) []string { return []string{fmt.Sprintf("http://127.0.0.1:%d/", port)} })
	c.background("tunnel", "web", func(port int) []string {
		return []string{"tunnel", "--server", c.url, "-f", file, "-p", "incluster", "--listen", fmt.Sprintf("127.0.0.1:%d", port)}
	}, func(port int) []string {
		return []string{"--socks5-hostname", fmt.Sprintf("127.0.0.1:%d", port), "http://web:8080/"}
	})
	c.clientSide(id)

	// A session held by an attached up whose client dies, then the
	// server's pod deleted: its Deployment makes another, which removes
	// the session's deployment after the grace; the detached one stays.
	session := c.attachedSession()
	c.kubectl("delete", "pod", "-l", "app.kubernetes.io/instance="+c.release, "--wait=true")
	_ = syscall.Kill(-session.Process.Pid, syscall.SIGKILL)
	_ = session.Wait()
	c.kubectl("rollout", "status", "deployment/"+c.server, "--timeout=3m")
	c.waitReachable()
	c.waitGone("incluster-session", 2*time.Minute)
	if out := c.compose(file, "incluster", "exec", "worker", "wget", "-qO-", "http://web:8080/"); !strings.Contains(out, "hello-from-web") {
		t.Errorf("after the server's pod was deleted, worker reached web: %q", out)
	}

	// An upgrade that changes the server's pod: it restarts; the detached
	// deployment goes on.
	c.run(c.helm, "upgrade", c.release, "./cornus", "--namespace", c.ns, "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "podAnnotations.e2e/upgraded=yes")
	c.waitReachable()
	if out := c.compose(file, "incluster", "ps"); strings.Count(out, "Up ") != 3 {
		t.Errorf("after helm upgrade, ps:\n%s", out)
	}
	if out := c.compose(file, "incluster", "exec", "worker", "wget", "-qO-", "http://web:8080/"); !strings.Contains(out, "hello-from-web") {
		t.Errorf("after helm upgrade, worker reached web: %q", out)
	}
	c.compose(file, "incluster", "down")
	c.uninstallLeavesData()
}

// loadThroughServer makes an image of the test's own, loads it through the
// server (into its registry: the nodes pull every image) and returns its
// name. The node is told to trust the server's registry at
// 127.0.0.1:NODEPORT with the chart's CA, as an operator would
// (containerd's hosts directory); that and what the node pulled go at the
// end.
func (c *cluster) loadThroughServer(id string) string {
	t := c.t
	host := fmt.Sprintf("127.0.0.1:%d", c.nodePort)
	hostDir := filepath.Join(nodeHosts, host)
	writeFile(t, filepath.Join(hostDir, "ca.crt"), c.caPEM)
	writeFile(t, filepath.Join(hostDir, "hosts.toml"), fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n",
		"https://"+host, "https://"+host, filepath.Join(hostDir, "ca.crt")))
	t.Cleanup(func() {
		_ = os.RemoveAll(hostDir)
		out, _ := c.try("ctr", "--address", nodeImages, "--namespace", "k8s.io", "images", "ls", "-q")
		for _, ref := range strings.Fields(out) {
			if strings.HasPrefix(ref, host+"/") {
				_, _ = c.try("ctr", "--address", nodeImages, "--namespace", "k8s.io", "images", "rm", ref)
			}
		}
	})
	name := "incluster/app:" + id
	f, err := os.Create(filepath.Join(t.TempDir(), "app.tar"))
	if err != nil {
		t.Fatal(err)
	}
	err = testimage.BuildBusybox(f, testimage.Options{Ref: name, Files: map[string]string{"/hello": "pulled-from-the-server-" + id + "\n"}})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if out := c.run(c.bin, "image", "load", "--server", c.url, "-i", f.Name()); !strings.Contains(out, name) {
		t.Fatalf("cornus image load --server: %q does not name %s", out, name)
	}
	return name
}

// clientSide deploys a service with a client-local mount and the client's
// egress end (one caretaker sidecar with both roles) through the
// in-cluster server: the client's file is read and written in the pod,
// and a target only the client reaches (this host's loopback) answers
// through the egress proxy, while the pod's own dial to it does not.
func (c *cluster) clientSide(id string) {
	t := c.t
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "client-side-"+id)
	}))
	defer target.Close()
	addr := strings.TrimPrefix(target.URL, "http://")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "src", "seed"), "seed-"+id+"\n")
	file := filepath.Join(dir, "compose.yaml")
	writeFile(t, file, fmt.Sprintf(`services:
  dev:
    image: cornus-test/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    volumes: ["./src:/work"]
    x-cornus-egress:
      mode: proxy
      rules:
        - pattern: %q
          route: client
      default: cluster
`, addr))
	const project = "incluster-dev"
	c.compose(file, project, "up", "-d")
	defer c.compose(file, project, "down", "-t", "1")
	in := func(script string) (string, error) {
		return c.try(c.bin, "compose", "--server", c.url, "-f", file, "-p", project, "exec", "-T", "dev", "sh", "-c", script)
	}
	if out, err := in("cat /work/seed && echo from-the-pod > /work/out"); err != nil || out != "seed-"+id+"\n" {
		t.Errorf("the client-local mount in the pod: %q %v", out, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "src", "out")); err != nil || string(b) != "from-the-pod\n" {
		t.Errorf("the pod's write on the client: %q %v", b, err)
	}
	get := fmt.Sprintf(`printf 'GET http://%s/ HTTP/1.0\r\n\r\n' | nc -w 5 127.0.0.1 3128`, addr)
	if out, _ := in(get); !strings.Contains(out, "client-side-"+id) {
		t.Errorf("the client's egress end through the in-cluster server: %q", out)
	}
	if out, _ := in("wget -qO- -T 3 http://" + addr + "/"); strings.Contains(out, "client-side-"+id) {
		t.Errorf("the pod reached the client's loopback without the egress end: %q", out)
	}
}

// attachedSession starts a foreground up of a one-service project (the
// client holding the session) and returns it once the service runs.
func (c *cluster) attachedSession() *exec.Cmd {
	t := c.t
	file := filepath.Join(t.TempDir(), "compose.yaml")
	writeFile(t, file, "services:\n  s:\n    image: cornus-test/busybox:1\n    command: [\"sleep\", \"3600\"]\n")
	cmd := exec.Command(c.bin, "compose", "--server", c.url, "-f", file, "-p", "incluster-session", "up")
	cmd.Env = append(os.Environ(), c.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		out, _ := c.try(c.bin, "compose", "--server", c.url, "-f", file, "-p", "incluster-session", "ps")
		if strings.Contains(out, "Up ") {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("the attached up's service does not run:\n%s", out)
		}
	}
}

// waitGone waits for a project's pods and workloads to leave the cluster.
func (c *cluster) waitGone(project string, within time.Duration) {
	c.t.Helper()
	var out string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(time.Second) {
		out = c.kubectl("get", "deployments,jobs,pods", "-l", "cornus.dev/project="+project, "-o", "name")
		if strings.TrimSpace(out) == "" {
			return
		}
	}
	c.t.Errorf("project %s is still in the cluster after %v (its session's client is gone):\n%s", project, within, out)
}

// uninstallLeavesData runs helm uninstall and checks that the data volume,
// and nothing else of the chart's, is left.
func (c *cluster) uninstallLeavesData() {
	c.run(c.helm, "uninstall", c.release, "--namespace", c.ns, "--wait", "--timeout", "3m")
	// (The server's pod goes a moment after its Deployment.)
	var got []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		got = strings.Fields(c.kubectl("get", "deployments,services,secrets,serviceaccounts,roles,rolebindings,pvc,pods",
			"-l", "app.kubernetes.io/instance="+c.release, "-o", "name"))
		if len(got) == 1 && got[0] == "persistentvolumeclaim/"+c.server+"-data" || time.Now().After(deadline) {
			break
		}
	}
	if len(got) != 1 || got[0] != "persistentvolumeclaim/"+c.server+"-data" {
		c.t.Errorf("after helm uninstall %s holds %q, want only the data volume", c.ns, got)
	}
}
