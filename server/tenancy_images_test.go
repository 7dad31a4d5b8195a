package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/internal/testimage"
)

// imageArchive is a busybox image archive tagged ref whose content is
// told apart by mark.
func imageArchive(t *testing.T, ref, mark string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: ref, Files: map[string]string{"/mark": mark}}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// load posts an archive to /v1/images/load as token.
func (ts *testServer) load(token string, archive []byte) (int, string) {
	ts.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.http.URL+"/v1/images/load", bytes.NewReader(archive))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (ts *testServer) removeImage(ref string) {
	if imgs, err := backends.Want[backends.Images](ts.b, backends.FeatureImages, "images"); err == nil {
		_ = imgs.RemoveImage(context.Background(), ref, true)
	}
}

// Item 5: the image store is shared, tags are not: bob cannot list,
// run, reach by ID, or overwrite alice's image, nor the operator's, nor
// write cornus's own repository (the caretaker image that runs as root
// with a deployment's token).
func TestImagesPerTenant(t *testing.T) {
	ts := newTestServer(t)
	if !ts.b.Capabilities().Has(backends.FeatureImages) {
		t.Skipf("the %s backend has no image store", ts.b.Name())
	}
	if _, err := ts.b.(backends.Images).LoadImage(context.Background(), bytes.NewReader(nil)); errdefs.IsNotImplemented(err) {
		t.Skipf("the %s backend takes no image loads: %v", ts.b.Name(), err)
	}
	ref := "cornus-test/alice-" + uniqueProject("") + ":1"
	t.Cleanup(func() { ts.removeImage(ref) })
	if code, body := ts.load(ts.alice, imageArchive(t, ref, "alice")); code != http.StatusOK {
		t.Fatalf("alice's load: %d %s", code, body)
	}
	// bob does not see it; alice does.
	for tok, want := range map[string]bool{ts.alice: true, ts.bob: false} {
		_, body := ts.request(http.MethodGet, "/v1/images", tok, nil)
		if strings.Contains(body, strings.Split(ref, ":")[0]) != want {
			t.Errorf("listing shows alice's image: %t, want %t: %s", !want, want, body)
		}
		// Nor by asking for it by name (issue 28's inspect route).
		code, body := ts.request(http.MethodGet, "/v1/images/inspect?name="+url.QueryEscape(ref), tok, nil)
		if (code == http.StatusOK) != want || want && !strings.Contains(body, strings.Split(ref, ":")[0]) {
			t.Errorf("inspect of alice's image: %d %s, want found %t", code, body, want)
		}
	}
	// The operator's shared image is there for both.
	for _, tok := range []string{ts.alice, ts.bob} {
		if code, body := ts.request(http.MethodGet, "/v1/images/inspect?name="+url.QueryEscape(testImage), tok, nil); code != http.StatusOK {
			t.Errorf("inspect of the shared %s: %d %s", testImage, code, body)
		}
	}
	// bob cannot overwrite it, nor the operator's image, nor write
	// cornus's own repository.
	for _, c := range []struct{ name, ref, says string }{
		{"alice's tag", ref, "another tenant's"},
		{"the operator's tag", testImage, "not yours"},
		{"cornus's own", caretaker.AgentRepo + ":0123456789abcdef", "cornus's own"},
	} {
		if code, body := ts.load(ts.bob, imageArchive(t, c.ref, "bob")); code != http.StatusForbidden || !strings.Contains(body, c.says) {
			t.Errorf("bob loads %s: %d %s, want 403 saying %q", c.name, code, body, c.says)
		}
	}
	// The operator's image again, unchanged, is no write.
	var same bytes.Buffer
	if err := testimage.BuildBusybox(&same, testimage.Options{Ref: testImage}); err != nil {
		t.Fatal(err)
	}
	if code, body := ts.load(ts.bob, same.Bytes()); code != http.StatusOK {
		t.Errorf("bob loads the operator's image as it is: %d %s", code, body)
	}
	// bob cannot run alice's image, by tag or by ID, nor cornus's own.
	img, err := ts.b.(backends.Images).InspectImage(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{ref, img.ID, caretaker.AgentRepo + ":0123456789abcdef"} {
		p := sleeperProject(uniqueProject("img"))
		a := p.Services["app"]
		a.Image = r
		p.Services["app"] = a
		ts.refused(http.MethodPost, "/v1/projects/"+p.Name+"/up", ts.bob, map[string]any{"spec": p}, http.StatusForbidden, "image")
		ts.noContainers(p.Name)
	}
	// Nor push it anywhere: a push's spec is admitted as an up's.
	pushed := sleeperProject(uniqueProject("push"))
	pa := pushed.Services["app"]
	pa.Image = ref
	pushed.Services["app"] = pa
	ts.refused(http.MethodPost, "/v1/projects/"+pushed.Name+"/push", ts.bob, map[string]any{"spec": pushed, "buildable": []string{"app"}}, http.StatusForbidden, "image")
	// alice runs hers, still hers.
	p := sleeperProject(uniqueProject("img"))
	a := p.Services["app"]
	a.Image = ref
	p.Services["app"] = a
	ts.upAs(ts.alice, p)
	if out := ts.exec(p.Name, "cat /mark"); out != "alice" {
		t.Fatalf("alice's image after bob's loads: /mark is %q", out)
	}
}

// Item 5, cornus's own image: a tag in its repository is trusted only
// if the image is the one this binary builds (by content digest).
func TestAgentImageVerifiedByDigest(t *testing.T) {
	ts := newTestServer(t)
	imgs, err := backends.Want[backends.Images](ts.b, backends.FeatureImages, "images")
	if err != nil {
		t.Skip(err)
	}
	ref, err := caretaker.EnsureAgentImage(context.Background(), ts.b, nil)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no agent image on the %s backend: %v", ts.b.Name(), err)
		}
		t.Skipf("no agent image on the %s backend (build the test with CGO_ENABLED=0): %v", ts.b.Name(), err)
	}
	good, err := imgs.InspectImage(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	// Poison the tag, as a tenant with write access to the store could.
	if _, err := imgs.LoadImage(context.Background(), bytes.NewReader(imageArchive(t, ref, "poison"))); err != nil {
		t.Skipf("cannot write the tag on the %s backend: %v", ts.b.Name(), err)
	}
	if bad, _ := imgs.InspectImage(context.Background(), ref); bad.ID == good.ID {
		t.Fatal("the poisoned image has the agent's ID: the test proves nothing")
	}
	if _, err := caretaker.EnsureAgentImage(context.Background(), ts.b, nil); err != nil {
		t.Fatal(err)
	}
	if now, _ := imgs.InspectImage(context.Background(), ref); now.ID != good.ID {
		raw, _ := json.Marshal(now)
		t.Fatalf("EnsureAgentImage kept a poisoned %s: %s", ref, raw)
	}
}
