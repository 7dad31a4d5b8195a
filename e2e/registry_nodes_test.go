package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
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
	compose := "services:\n  app:\n    image: " + name + ":1\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done\"]\n"
	p := newProject(t, compose, srv.env()...)
	reg := registrytest.Client{T: t, Base: srv.url, Token: srv.token}
	digest := loadNew(t, p, reg, name+":1")

	p.must("compose", "up", "-d", "--wait")
	host := strings.TrimPrefix(srv.url, "http://")
	if got := podImage(t, p.name, digest); got != host+"/"+name+"@"+digest {
		t.Fatalf("the pod runs %s, want %s/%s@%s pulled from the server", got, host, name, digest)
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

// TestRegistryNodesBuild: on kubernetes, `cornus compose --server up
// --build` builds on the server (cornus's buildkitd), FROM an image the
// tenant loaded into the server's registry; the result goes into the
// registry and the node pulls it from there. The build's arg, secret and
// context reach the image, as on every other backend.
func TestRegistryNodesBuild(t *testing.T) {
	onlyOn(t, "kubernetes", "builds reach the nodes through the server's registry")
	srv := startServer(t, t.TempDir())
	base := uniqueName("nodes-base-")
	p := newProject(t, buildCompose, append(srv.env(), "BUILD_TOKEN=s3cret")...)
	files := buildFiles("one")
	files["app/Dockerfile"] = strings.Replace(files["app/Dockerfile"], "FROM "+image, "FROM "+base+":1", 1)
	writeFiles(t, p.dir, files)
	reg := registrytest.Client{T: t, Base: srv.url, Token: srv.token}
	loadNew(t, p, reg, base+":1")
	built := p.name + "-app"
	t.Cleanup(func() { reg.DeleteRepo(built) })

	p.must("compose", "up", "-d", "--wait", "--build")
	_, hdr, _ := reg.Do("HEAD", "/v2/"+built+"/manifests/latest", nil)
	digest := hdr.Get("Docker-Content-Digest")
	if digest == "" {
		t.Fatalf("the build is not in the server's registry")
	}
	if got, want := podImage(t, p.name, digest), strings.TrimPrefix(srv.url, "http://")+"/"+built+"@"+digest; got != want {
		t.Fatalf("the pod runs %s, want %s", got, want)
	}
	if got := strings.TrimSpace(p.must("compose", "exec", "-T", "app", "cat", "/greeting")); got != "hello one" {
		t.Fatalf("/greeting: %q", got)
	}
	if _, errOut, code := p.run("compose", "exec", "-T", "app", "sh", "-c", "test ! -e /run/secrets/token && test ! -e /ctx/ignored.txt"); code != 0 {
		t.Fatalf("the secret or the ignored file reached the image: %s", errOut)
	}
}

// loadNew makes an image no node has (an ONBUILD trigger of its own makes
// its config new), loads it as ref into the server's registry with
// `cornus image load --server`, and returns its manifest's digest there.
func loadNew(t *testing.T, p *project, reg registrytest.Client, ref string) string {
	t.Helper()
	repo, _, _ := strings.Cut(ref, ":")
	tar := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	err = testimage.BuildBusybox(f, testimage.Options{Ref: ref, OnBuild: []string{"RUN echo " + repo}})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if out := p.must("image", "load", "-i", tar); !strings.Contains(out, ref) {
		t.Fatalf("image load --server: %s", out)
	}
	t.Cleanup(func() { reg.DeleteRepo(repo) })
	code, hdr, body := reg.Do("HEAD", "/v2/"+repo+"/manifests/"+strings.TrimPrefix(ref, repo+":"), nil)
	if code != http.StatusOK {
		t.Fatalf("the load is not in the server's registry: %d %s", code, body)
	}
	return hdr.Get("Docker-Content-Digest")
}

// podImage is the image project's pod runs, once its image ID is digest
// (pulled from the server's registry); the pod's pull Secret and the
// node's pulled image are removed when the test ends.
func podImage(t *testing.T, project, digest string) string {
	t.Helper()
	pod, err := exec.Command("kubectl", "-n", k8sNamespace(), "get", "pods", "-l", "cornus.dev/project="+project,
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
	if !strings.HasSuffix(fields[1], digest) {
		t.Fatalf("the pod's image ID is %s, want one pulled by digest %s", fields[1], digest)
	}
	return fields[0]
}

// TestRegistryNodesClientImage: `cornus compose --server up` sends an
// image the server lacks from the client's own store (here dockerd, as
// on a developer's machine) into the server, whence the node pulls it:
// no registry of the developer's, no `image load` by hand.
func TestRegistryNodesClientImage(t *testing.T) {
	onlyOn(t, "kubernetes", "the nodes pull from the server's registry")
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("the client's store here is dockerd, through the docker CLI: %v", err)
	}
	srv := startServer(t, t.TempDir())
	name := uniqueName("client-only-")
	tar := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	err = testimage.BuildBusybox(f, testimage.Options{Ref: name + ":1", OnBuild: []string{"RUN echo " + name}})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("docker", "load", "-i", tar).CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", name+":1").Run() })
	compose := "services:\n  app:\n    image: " + name + ":1\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done\"]\n"
	p := newProject(t, compose, append(srv.env(), "CORNUS_DEPLOY_BACKEND=dockerhost")...)
	reg := registrytest.Client{T: t, Base: srv.url, Token: srv.token}
	t.Cleanup(func() { reg.DeleteRepo(name) })
	_, errOut, code := p.run("compose", "up", "-d", "--wait")
	if code != 0 || !strings.Contains(errOut, "Image "+name+":1 sent to") {
		t.Fatalf("up: exit %d, want the image sent:\n%s", code, errOut)
	}
	_, hdr, _ := reg.Do("HEAD", "/v2/"+name+"/manifests/1", nil)
	digest := hdr.Get("Docker-Content-Digest")
	if got, want := podImage(t, p.name, digest), strings.TrimPrefix(srv.url, "http://")+"/"+name+"@"+digest; digest == "" || got != want {
		t.Fatalf("the pod runs %s, want %s", got, want)
	}
	// Once there, it is not sent again.
	if _, errOut, code := p.run("compose", "up", "-d", "--wait"); code != 0 || strings.Contains(errOut, "sent to") {
		t.Fatalf("a second up: exit %d, want nothing sent:\n%s", code, errOut)
	}
}

// nodesPull reports whether b's nodes pull every image (kubernetes):
// there a build through a server goes into its registry, and reads its
// bases from there.
func nodesPull(b backends.Backend) bool {
	_, ok := b.(backends.RegistryPuller)
	return ok
}

// buildGap is why a build with env cannot run on b, if it cannot: b's
// declared gap, which a server lifts where the nodes pull.
func buildGap(b backends.Backend, env []string) (string, bool) {
	why, gap := b.Capabilities().Gap("build")
	if gap && nodesPull(b) && envOf(env, "CORNUS_SERVER") != "" {
		return "", false
	}
	return why, gap
}

// buildBase is the image a test's Dockerfile built with env starts FROM:
// the test image; where the nodes pull and env names a server, an image
// env's tenant loads into the server's registry first (the server's
// builds read their bases from it, not from the nodes; the test image
// there would be looked for on Docker Hub). What the node pulls from
// that server is removed when the test ends.
func buildBase(t *testing.T, b backends.Backend, env []string) string {
	t.Helper()
	server := envOf(env, "CORNUS_SERVER")
	if !nodesPull(b) || server == "" {
		return image
	}
	p := newProject(t, "services: {}\n", env...)
	ref := uniqueName("base-") + ":1"
	loadNew(t, p, registrytest.Client{T: t, Base: server, Token: envOf(env, "CORNUS_TOKEN")}, ref)
	host := strings.TrimPrefix(server, "http://") + "/"
	t.Cleanup(func() {
		ls, _ := nodeCtr("images", "ls", "-q").Output()
		for _, ref := range strings.Fields(string(ls)) {
			if strings.HasPrefix(ref, host) {
				_ = nodeCtr("images", "rm", ref).Run()
			}
		}
	})
	return ref
}

// envOf is key's value in env ("" when unset).
func envOf(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
