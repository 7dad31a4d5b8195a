package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/tonistiigi/fsutil/types"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/internal/testimage"
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
// 24 item 6, issue 21's rule): bob cannot build FROM alice's image (nor
// read it with COPY --from, a mount or an ONBUILD, his Dockerfile's or
// his base image's, nor through a frontend of his choosing), write her tag, name her cache mounts, get a
// privileged build or read a store of the server's; what bob builds is
// bob's alone.
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
	// bob's own image whose ONBUILD trigger reads alice's.
	trap := "cornus-test/bob-trap-" + uniqueProject("") + ":1"
	t.Cleanup(func() { ts.removeImage(trap) })
	var trapTar bytes.Buffer
	if err := testimage.BuildBusybox(&trapTar, testimage.Options{Ref: trap, OnBuild: []string{"COPY --from=" + alices + " /mark /alices-mark"}}); err != nil {
		t.Fatal(err)
	}
	if code, body := ts.load(ts.bob, trapTar.Bytes()); code != 200 {
		t.Fatalf("bob's load: %d %s", code, body)
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
		{"COPY --from alice's image", buildProject(t, "bob-f:1", "FROM "+testImage+"\nCOPY --from="+alices+" /mark /alices-mark\n", spec.Build{}), errdefs.IsPermissionDenied, "another tenant's"},
		{"a mount from alice's image", buildProject(t, "bob-g:1", "FROM "+testImage+"\nRUN --mount=type=bind,from="+alices+",target=/a cat /a/mark\n", spec.Build{}), errdefs.IsPermissionDenied, "another tenant's"},
		{"an ONBUILD reading alice's image", buildProject(t, "bob-h:1", "FROM "+testImage+"\nONBUILD COPY --from="+alices+" /mark /alices-mark\n", spec.Build{}), errdefs.IsPermissionDenied, "another tenant's"},
		{"FROM his image whose ONBUILD reads alice's", buildProject(t, "bob-l:1", "FROM "+trap+"\n", spec.Build{}), errdefs.IsPermissionDenied, "ONBUILD"},
		{"a frontend of its own", buildProject(t, "bob-i:1", "# syntax="+testImage+"\nFROM "+testImage+"\n", spec.Build{}), errdefs.IsPermissionDenied, "syntax directive"},
		{"a frontend of its own by arg", buildProject(t, "bob-j:1", "FROM "+testImage+"\n", spec.Build{Args: map[string]string{"BUILDKIT_SYNTAX": testImage}}), errdefs.IsPermissionDenied, "args.BUILDKIT_SYNTAX"},
		{"alice's cache mounts by namespace", buildProject(t, "bob-k:1", "FROM "+testImage+"\n", spec.Build{Args: map[string]string{"BUILDKIT_CACHE_MOUNT_NS": "cornus-tenant/alice"}}), errdefs.IsPermissionDenied, "args.BUILDKIT_CACHE_MOUNT_NS"},
		{"an OCI layout of the server's", buildProject(t, "bob-d:1", "FROM base\n", spec.Build{AdditionalContexts: map[string]string{"base": "oci-layout://cornus0@sha256:" + strings.Repeat("a", 64)}}), errdefs.IsPermissionDenied, "OCI layout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if img := c.p.Services["app"].Image; img != alices {
				t.Cleanup(func() { ts.removeImage(img) }) // should the attack succeed
			}
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

	// An image that is a shared one (the same ID) under bob's name hides
	// it from no one, and alice does not see his name.
	same := "cornus-test/bob-same-" + uniqueProject("") + ":1"
	t.Cleanup(func() { ts.removeImage(same) })
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: same}); err != nil {
		t.Fatal(err)
	}
	if code, body := ts.load(ts.bob, buf.Bytes()); code != 200 {
		t.Fatalf("bob's load: %d %s", code, body)
	}
	if ts.imageID(same) != ts.imageID(testImage) {
		t.Fatalf("the case needs the shared image under bob's name: %s is %s, %s %s", same, ts.imageID(same), testImage, ts.imageID(testImage))
	}
	t.Cleanup(func() { ts.removeImage("alice-y:1") })
	if _, err := ts.buildAs(ts.alice, buildProject(t, "alice-y:1", "FROM "+testImage+"\nRUN true\n", spec.Build{})); err != nil {
		t.Fatalf("alice building FROM the shared image bob named too: %v", err)
	}
	_, body := ts.request("GET", "/v1/images", ts.alice, nil)
	if !strings.Contains(body, testImage) || strings.Contains(body, "bob-same") {
		t.Errorf("alice's listing after bob named the shared image: want %s and not bob's name:\n%s", testImage, body)
	}
}

// imageID is ref's ID in the backend's store ("" when absent).
func (ts *testServer) imageID(ref string) string {
	if imgs, err := backends.Want[backends.Images](ts.b, backends.FeatureImages, "images"); err == nil {
		if img, err := imgs.InspectImage(context.Background(), ref); err == nil {
			return img.ID
		}
	}
	return ""
}

// Two tenants admitted to write one new name: the first claims it, the
// second is refused before anything is written (the check at admission
// and the record after the build are apart in time).
func TestImageNameClaim(t *testing.T) {
	o, err := loadImageOwners(filepath.Join(t.TempDir(), "images.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.claim("alice", []string{"new:1"}); err != nil {
		t.Fatal(err)
	}
	if err := o.claim("bob", []string{"other:1", "docker.io/library/new:1"}); !errdefs.IsPermissionDenied(err) {
		t.Fatalf("bob claiming alice's new name: %v", err)
	}
	if o.tagOwner("other:1") != "" || o.tagOwner("new:1") != "alice" {
		t.Fatalf("a refused claim changed owners: other:1 %q, new:1 %q", o.tagOwner("other:1"), o.tagOwner("new:1"))
	}
}

// A cache mount (RUN --mount=type=cache) outlives its build on the
// builder: on a server each tenant's are its own. Alice's second build
// sees what her first left in the cache (the mount persists: the test can
// fail); bob's, naming the same cache, sees nothing of hers. A builder
// that cannot keep them apart refuses cache mounts on a server.
func TestBuildCacheMountsPerTenant(t *testing.T) {
	ts := newTestServer(t)
	if _, gap := ts.b.Capabilities().Gap("build"); gap {
		t.Skip("the backend declares a build gap (TestBuildTenancy asserts it)")
	}
	mark := uniqueProject("m")
	run := func(token, image, cmd string) error {
		t.Cleanup(func() { ts.removeImage(image) })
		df := "FROM " + testImage + "\nRUN --mount=type=cache,id=shared,target=/c " + cmd + "\n"
		_, err := ts.buildAs(token, buildProject(t, image, df, spec.Build{}))
		return err
	}
	err := run(ts.alice, "alice-c1:1", "sh -c 'echo alice > /c/"+mark+"'")
	if errdefs.IsPermissionDenied(err) && strings.Contains(err.Error(), "shares cache mounts") {
		return // the builder's declared limit, refused on a server
	}
	if err != nil {
		t.Fatalf("alice's first build: %v", err)
	}
	if err := run(ts.alice, "alice-c2:1", "test -e /c/"+mark); err != nil {
		t.Fatalf("alice's second build does not see her cache: %v", err)
	}
	if err := run(ts.bob, "bob-c1:1", "test ! -e /c/"+mark); err != nil {
		t.Fatalf("bob's build sees alice's cache: %v", err)
	}
}

// TestWalkEntries: what a client sends as its walk is bounded and
// checked before BuildKit's receiver sees it: paths clean and relative,
// files directories, regular files or symlinks (no device node made on
// the server's disk), each entry bounded.
func TestWalkEntries(t *testing.T) {
	for _, c := range []struct {
		path string
		mode fs.FileMode
		ok   bool
	}{
		{"a/b", 0o644, true}, {"d", fs.ModeDir | 0o755, true}, {"l", fs.ModeSymlink | 0o777, true}, {"s", fs.ModeSetuid | 0o755, true},
		{"../x", 0o644, false}, {"/etc/x", 0o644, false}, {"a//b", 0o644, false}, {"a/./b", 0o644, false}, {"", 0o644, false},
		{"sda", fs.ModeDevice | 0o666, false}, {"tty", fs.ModeDevice | fs.ModeCharDevice | 0o666, false},
		{"p", fs.ModeNamedPipe | 0o644, false}, {"sock", fs.ModeSocket | 0o755, false},
	} {
		err := walkable(&types.Stat{Path: c.path, Mode: uint32(c.mode)})
		if (err == nil) != c.ok {
			t.Errorf("%q %v: %v, want ok %t", c.path, c.mode, err, c.ok)
		}
	}
	r := remoteFS{f: remoteFiles{sent: api.NewBudget("files", 1<<30)}}
	long := bufio.NewReader(strings.NewReader(`{"stat":{"path":"` + strings.Repeat("a", maxWalkLine) + `"}}` + "\n"))
	if _, err := r.entry(long, 0); !errdefs.IsResourceExhausted(err) {
		t.Errorf("an entry over %d bytes: %v", maxWalkLine, err)
	}
	if _, err := r.entry(bufio.NewReader(strings.NewReader("{}\n")), maxWalkEntries+1); !errdefs.IsResourceExhausted(err) {
		t.Errorf("a walk of more than %d entries: %v", maxWalkEntries, err)
	}
	if e, err := r.entry(bufio.NewReader(strings.NewReader(`{"end":true}`+"\n")), 0); err != nil || !e.End {
		t.Errorf("the end of a walk: %+v %v", e, err)
	}
}

// A RUN step's cached result may hold what a secret mount gave it, and
// its cache key does not name the secret: on a server, one tenant's
// cached steps are never another's. Alice's unchanged rebuild hits her
// cache (the same image: the test can fail); bob's identical build runs
// its steps anew (another image).
func TestBuildStepCachePerTenant(t *testing.T) {
	ts := newTestServer(t)
	if _, gap := ts.b.Capabilities().Gap("build"); gap {
		t.Skip("the backend declares a build gap (TestBuildTenancy asserts it)")
	}
	df := "FROM " + testImage + "\nRUN head -c 16 /dev/urandom | od -x > /r-" + uniqueProject("m") + "\n"
	id := func(token, image string) string {
		t.Helper()
		t.Cleanup(func() { ts.removeImage(image) })
		res, err := ts.buildAs(token, buildProject(t, image, df, spec.Build{}))
		if err != nil || len(res.Images) != 1 {
			t.Fatalf("build %s: %+v %v", image, res, err)
		}
		return res.Images[0].ID
	}
	first, again := id(ts.alice, "alice-s1:1"), id(ts.alice, "alice-s2:1")
	if first != again {
		t.Fatalf("alice's unchanged rebuild made another image (%s, %s): no cache to keep apart here", first, again)
	}
	if bobs := id(ts.bob, "bob-s1:1"); bobs == first {
		t.Fatalf("bob's identical build is alice's cached image %s", bobs)
	}
}
