package e2e

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/registry"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestComposePush: compose push sends the built and named services'
// images to a registry the test serves on 127.0.0.1 that takes one
// password, with the login of the client's docker config (through a
// server too: the server's host has none); without the login it fails,
// --ignore-push-failures goes on; pulled-only and unnamed services are
// skipped. On dockerd docker compose push does the same beside it.
func TestComposePush(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	const password = "push-e2e-secret"
	store, err := registry.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := registry.New(registry.Config{Store: store, Auth: registrytest.TokenAuth(password), UploadDir: t.TempDir(), Service: "cornus-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewServer(h)
	t.Cleanup(reg.Close)
	host := reg.Listener.Addr().String()
	login, none := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(login, "config.json"), `{"auths": {"`+host+`": {"auth": "`+
		base64.StdEncoding.EncodeToString([]byte("anyone:"+password))+`"}}}`)

	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, "", env...)
		ref := host + "/cornus-test/pushed-" + p.name + ":1"
		writeFile(t, filepath.Join(p.dir, "compose.yaml"), `services:
  app:
    build: ./app
    image: `+ref+`
  plain:
    image: cornus-test/busybox:1
  unnamed:
    build: ./app
`)
		writeFiles(t, p.dir, map[string]string{"app/Dockerfile": "FROM cornus-test/busybox:1\n"})
		if refusedWithout(t, b, backends.FeaturePush, "push", p, "compose", "push") {
			return
		}
		tarFile := filepath.Join(p.dir, "app.tar")
		f, err := os.Create(tarFile)
		if err != nil {
			t.Fatal(err)
		}
		err = testimage.BuildBusybox(f, testimage.Options{Ref: ref, Files: map[string]string{"etc/pushed": p.name}})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		p.must("image", "load", "-i", tarFile)
		if imgs, err := backends.Want[backends.Images](b, backends.FeatureImages, "images"); err == nil {
			t.Cleanup(func() { _ = imgs.RemoveImage(context.Background(), ref, true) })
		}

		p.env = append(p.env, "DOCKER_CONFIG="+none)
		if _, errOut, code := p.run("compose", "push"); code == 0 || !strings.Contains(errOut, "services.app") {
			t.Fatalf("push without a login: exit %d\n%s", code, errOut)
		}
		if _, errOut, code := p.run("compose", "push", "--ignore-push-failures"); code != 0 {
			t.Fatalf("push --ignore-push-failures without a login: exit %d\n%s", code, errOut)
		}
		p.env = append(p.env, "DOCKER_CONFIG="+login)
		_, errOut, code := p.run("compose", "--progress", "plain", "push")
		if code != 0 {
			t.Fatalf("push with the login: exit %d\n%s", code, errOut)
		}
		for _, skipped := range []string{"plain", "unnamed"} {
			if !slices.ContainsFunc(strings.Split(errOut, "\n"), func(l string) bool {
				return slices.Equal(strings.Fields(l), []string{"Service", skipped, "Skipped"})
			}) {
				t.Errorf("push does not say %s is skipped:\n%s", skipped, errOut)
			}
		}
		c := registrytest.Client{T: t, Base: reg.URL, Token: password}
		repo := strings.TrimSuffix(strings.TrimPrefix(ref, host+"/"), ":1")
		if code, _, body := c.Do("GET", "/v2/"+repo+"/manifests/1", nil, "Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"); code != 200 {
			t.Fatalf("the registry has no %s after the push: %d %s", ref, code, body)
		}
		c.DeleteRepo(repo)
		if len(env) == 0 && b.Name() == "dockerhost" {
			dc := composeBinary(t)
			if out, code := runDockerCompose(t, dc, p, "--progress", "quiet", "push"); code != 0 {
				t.Errorf("docker compose push with the login: exit %d\n%s", code, out)
			}
			if code, _, _ := c.Do("GET", "/v2/"+repo+"/manifests/1", nil); code != 200 {
				t.Errorf("docker compose push did not reach the registry: %d", code)
			}
		}
	})
}
