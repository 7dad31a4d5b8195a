package server

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/registry/registrytest"
)

// TestRegistryDockerCLI: the docker CLI logs in to the server's registry
// with a token, pushes an image and pulls it back byte-identical (the
// same manifest digest); another tenant's login cannot pull it. dockerd
// reaches the server on loopback, where it speaks plain HTTP.
func TestRegistryDockerCLI(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the docker CLI is required under CI (scripts/setup.sh installs it): %v", err)
		}
		t.Skip("no docker CLI (scripts/setup.sh installs it)")
	}
	ts := newTestServer(t)
	if ts.b.Name() != "dockerhost" {
		t.Skipf("the docker CLI pushes from dockerd's store; this run's backend is %s (the dockerhost run covers it)", ts.b.Name())
	}
	host := strings.TrimPrefix(ts.http.URL, "http://")
	repo := uniqueProject("alice/busybox-") // deleted at the end: a push to dockerd's store outlives the server
	ref := host + "/" + repo + ":1"
	owner := registrytest.Client{T: t, Base: ts.http.URL, Token: ts.alice}
	t.Cleanup(func() { owner.DeleteRepo(repo) })
	docker := func(cfg string, args ...string) (string, error) {
		cmd := exec.Command("docker", args...)
		cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+cfg)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	aliceCfg, bobCfg := t.TempDir(), t.TempDir()
	login := func(cfg, user, token string) {
		cmd := exec.Command("docker", "login", host, "-u", user, "--password-stdin")
		cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+cfg)
		cmd.Stdin = strings.NewReader(token)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docker login as %s: %v\n%s", user, err, out)
		}
	}
	login(aliceCfg, "alice", ts.alice)
	login(bobCfg, "bob", ts.bob)
	t.Cleanup(func() { _, _ = docker(aliceCfg, "rmi", "-f", ref) })
	if out, err := docker(aliceCfg, "tag", testImage, ref); err != nil {
		t.Fatalf("docker tag: %v\n%s", err, out)
	}
	out, err := docker(aliceCfg, "push", ref)
	if err != nil {
		t.Fatalf("docker push: %v\n%s", err, out)
	}
	_, pushed, ok := strings.Cut(out, "digest: ")
	pushed, _, _ = strings.Cut(pushed, " ")
	if !ok || !strings.HasPrefix(pushed, "sha256:") {
		t.Fatalf("docker push printed no digest:\n%s", out)
	}
	if out, err := docker(aliceCfg, "rmi", ref); err != nil {
		t.Fatalf("docker rmi: %v\n%s", err, out)
	}
	if out, err := docker(bobCfg, "pull", ref); err == nil {
		t.Fatalf("bob pulled alice's image:\n%s", out)
	}
	if out, err := docker(aliceCfg, "pull", ref); err != nil || !strings.Contains(out, pushed) {
		t.Fatalf("alice's pull (want digest %s): %v\n%s", pushed, err, out)
	}
	images, err := backends.Want[backends.Images](ts.b, backends.FeatureImages, "images")
	if err != nil {
		t.Fatal(err)
	}
	if img, err := images.InspectImage(t.Context(), ref); err != nil || len(img.Tags) == 0 {
		t.Fatalf("the pulled image is not in dockerd: %v", err)
	}
}
