package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// buildAs builds p's images as token through the server, serving the
// build's files from this process as a client would.
func (ts *testServer) buildAs(token string, p spec.Project) (api.BuildResult, error) {
	ts.t.Helper()
	c := ts.clientOf(token)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sess, err := c.OpenSession(ctx, p.Name, true)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer sess.Close()
	idb := make([]byte, 8)
	_, _ = rand.Read(idb)
	id := hex.EncodeToString(idb)
	var builds []spec.Build
	for _, a := range p.Services {
		if a.Build != nil {
			builds = append(builds, *a.Build)
		}
	}
	sess.ServeBuild(id, builds, builder.LocalFiles{})
	return c.Build(ctx, sess.ID, api.BuildRequest{Spec: p, BuildID: id})
}

// buildProject is one service built from a context holding df.
func buildProject(t *testing.T, image, df string, b spec.Build) spec.Project {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Context = dir
	return spec.Project{Name: uniqueProject("b"), Services: map[string]spec.App{"app": {Image: image, Build: &b}}}.Normalize()
}

// Builds through the server meet tenancy as every other spec does (issue
// 24 item 6, issue 21's rule): bob cannot build FROM alice's image, write
// her tag, get a privileged build or read a store of the server's; what
// bob builds is bob's alone.
func TestBuildTenancy(t *testing.T) {
	ts := newTestServer(t)
	if why, gap := ts.b.Capabilities().Gap("build"); gap {
		_, err := ts.buildAs(ts.bob, buildProject(t, "bob-img:1", "FROM "+testImage+"\n", spec.Build{}))
		if !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), why) {
			t.Fatalf("declared gap: %v", err)
		}
		return
	}
	alices := "cornus-test/alice-" + uniqueProject("") + ":1"
	t.Cleanup(func() { ts.removeImage(alices) })
	if code, body := ts.load(ts.alice, imageArchive(t, alices, "alice")); code != 200 {
		t.Fatalf("alice's load: %d %s", code, body)
	}
	for _, c := range []struct {
		name  string
		p     spec.Project
		class func(error) bool
		says  string
	}{
		{"FROM alice's image", buildProject(t, "bob-a:1", "FROM "+alices+"\nRUN true\n", spec.Build{}), errdefs.IsPermissionDenied, "another tenant's"},
		{"alice's tag", buildProject(t, alices, "FROM "+testImage+"\n", spec.Build{}), errdefs.IsPermissionDenied, "another tenant's"},
		{"privileged", buildProject(t, "bob-b:1", "FROM "+testImage+"\n", spec.Build{Privileged: true}), errdefs.IsPermissionDenied, "build.privileged"},
		{"host network", buildProject(t, "bob-c:1", "FROM "+testImage+"\n", spec.Build{Network: spec.BuildNetworkHost}), errdefs.IsPermissionDenied, "build.network"},
		{"a local cache on the server's disk", buildProject(t, "bob-e:1", "FROM "+testImage+"\n", spec.Build{CacheTo: []string{"type=local,dest=/etc/cornus-x"}}), errdefs.IsPermissionDenied, "is a directory"},
		{"an OCI layout of the server's", buildProject(t, "bob-d:1", "FROM base\n", spec.Build{AdditionalContexts: map[string]string{"base": "oci-layout://cornus0@sha256:" + strings.Repeat("a", 64)}}), errdefs.IsPermissionDenied, "OCI layout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ts.buildAs(ts.bob, c.p)
			if !c.class(err) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("want a refusal saying %q, got %v", c.says, err)
			}
		})
	}

	bobs := "cornus-test/bob-" + uniqueProject("") + ":1"
	t.Cleanup(func() { ts.removeImage(bobs) })
	res, err := ts.buildAs(ts.bob, buildProject(t, bobs, "FROM "+testImage+"\nRUN echo bob > /who\n", spec.Build{}))
	if err != nil {
		t.Fatalf("bob's own build: %v", err)
	}
	if len(res.Images) != 1 || res.Images[0].Image != bobs || res.Images[0].ID == "" {
		t.Fatalf("bob's build result: %+v", res)
	}
	for tok, want := range map[string]bool{ts.bob: true, ts.alice: false} {
		_, body := ts.request("GET", "/v1/images", tok, nil)
		if strings.Contains(body, strings.Split(bobs, ":")[0]) != want {
			t.Errorf("listing shows bob's built image: %t, want %t", !want, want)
		}
	}
	if _, err := ts.buildAs(ts.alice, buildProject(t, "alice-x:1", "FROM "+bobs+"\n", spec.Build{})); !errdefs.IsPermissionDenied(err) {
		t.Fatalf("alice building FROM bob's built image: %v", err)
	}
	if imgs, err := backends.Want[backends.Images](ts.b, backends.FeatureImages, "images"); err == nil {
		if _, err := imgs.InspectImage(context.Background(), "bob-a:1"); !errdefs.IsNotFound(err) {
			t.Errorf("a refused build left an image: %v", err)
		}
	}
}
