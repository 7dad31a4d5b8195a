package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestRegistryNodesPull: on kubernetes the nodes pull every image, so
// `cornus image load --server` puts an image the node has never had into
// the server's registry, and `cornus compose --server up` runs it: the
// node pulls it from the server with the tenant's pull credential, by the
// digest the registry serves. Another tenant's up of it is refused. This
// is the registry issue's path on the real cluster (nothing imported into
// the node by hand).
func TestRegistryNodesPull(t *testing.T) {
	onlyOn(t, "kubernetes", "the nodes pull from the server's registry")
	dir := t.TempDir()
	srv := startServer(t, dir)
	name := uniqueName("nodes-pull-")
	tar := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	// An ONBUILD trigger of its own makes its config, and so the image,
	// one no node has.
	err = testimage.BuildBusybox(f, testimage.Options{Ref: name + ":1", OnBuild: []string{"RUN echo " + name}})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	compose := "services:\n  app:\n    image: " + name + ":1\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done\"]\n"
	p := newProject(t, compose, srv.env()...)
	if out := p.must("image", "load", "-i", tar); !strings.Contains(out, name+":1") {
		t.Fatalf("image load --server: %s", out)
	}
	reg := registrytest.Client{T: t, Base: srv.url, Token: srv.token}
	t.Cleanup(func() { reg.DeleteRepo(name) })
	code, hdr, body := reg.Do("GET", "/v2/"+name+"/manifests/1", nil)
	if code != http.StatusOK {
		t.Fatalf("the load is not in the server's registry: %d %s", code, body)
	}
	digest := hdr.Get("Docker-Content-Digest")

	p.must("compose", "up", "-d", "--wait")
	host := strings.TrimPrefix(srv.url, "http://")
	pod, err := exec.Command("kubectl", "-n", k8sNamespace(), "get", "pods", "-l", "cornus.dev/project="+p.name,
		"-o", "jsonpath={.items[0].spec.containers[0].image} {.items[0].status.containerStatuses[0].imageID} {.items[0].spec.imagePullSecrets[0].name}").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get pods: %v: %s", err, pod)
	}
	fields := strings.Fields(string(pod))
	if len(fields) != 3 {
		t.Fatalf("the pod: %q", pod)
	}
	t.Cleanup(func() {
		_ = exec.Command("kubectl", "-n", k8sNamespace(), "delete", "secret", fields[2]).Run()
		// The node's pull: its digest ref and the image ID ref CRI adds.
		ls, _ := nodeCtr("images", "ls").Output()
		for _, line := range strings.Split(string(ls), "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.Contains(line, digest) {
				_ = nodeCtr("images", "rm", f[0]).Run()
			}
		}
	})
	if fields[0] != host+"/"+name+"@"+digest || !strings.HasSuffix(fields[1], digest) {
		t.Fatalf("the pod runs %s (image ID %s), want %s/%s@%s pulled from the server", fields[0], fields[1], host, name, digest)
	}

	// Another tenant names it, as loaded and on the registry's host.
	out, err := exec.Command(cornusBin, "token", "create", "--tokens-file", filepath.Join(dir, "tokens"), "bob").Output()
	if err != nil {
		t.Fatal(err)
	}
	bob := newProject(t, compose, "CORNUS_SERVER="+srv.url, "CORNUS_TOKEN="+strings.TrimSpace(string(out)))
	for _, image := range []string{name + ":1", host + "/" + name + "@" + digest} {
		if err := os.WriteFile(filepath.Join(bob.dir, "compose.yaml"), []byte(strings.Replace(compose, name+":1", image, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := bob.run("compose", "up", "-d"); code == 0 || !strings.Contains(errOut, "another tenant's") {
			t.Errorf("bob's up of %s: exit %d\n%s", image, code, errOut)
		}
	}
}
