package server

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
)

// TestExportCommitTenancy: compose export and commit through the server
// reach the tenant's own containers; another tenant can neither export
// nor commit them, nor commit its own container under another tenant's
// name, the operator's shared image or cornus's own repository. An
// image alice commits is hers: bob does not see it.
func TestExportCommitTenancy(t *testing.T) {
	ts := newTestServer(t)
	if !ts.b.Capabilities().Has(backends.FeatureExport) || !ts.b.Capabilities().Has(backends.FeatureCommit) {
		t.Skipf("the %s backend has no export or commit: the e2e test checks its refusal", ts.b.Name())
	}
	ctx := context.Background()
	alices, bobs := uniqueProject("alice-commit-"), uniqueProject("bob-commit-")
	ts.upAs(ts.alice, sleeperProject(alices))
	t.Cleanup(func() { ts.down(alices) })
	ts.upAs(ts.bob, sleeperProject(bobs))
	t.Cleanup(func() { ts.down(bobs) })
	alice, bob := ts.projectsOf(ts.alice), ts.projectsOf(ts.bob)
	app := engine.CopyOptions{Service: "app"}

	rc, err := alice.Export(ctx, alices, app)
	if err != nil {
		t.Fatalf("alice's export: %v", err)
	}
	if names := tarEntries(t, rc); !slices.Contains(names, "bin/sh") {
		t.Fatalf("alice's export lacks bin/sh: %d entries", len(names))
	}

	ref := alices + "/mine:1"
	imgs, _ := backends.Want[backends.Images](ts.b, backends.FeatureImages, "images")
	id, err := alice.Commit(ctx, alices, app, backends.CommitOptions{Reference: ref})
	if err != nil {
		t.Fatalf("alice's commit: %v", err)
	}
	t.Cleanup(func() { _ = imgs.RemoveImage(context.Background(), id, true) })
	if _, err := imgs.InspectImage(ctx, ref); err != nil {
		t.Fatalf("alice's committed image %s: %v", ref, err)
	}
	seen, err := ts.clientOf(ts.bob).ListImages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(seen, func(i backends.Image) bool {
		return strings.TrimPrefix(i.ID, "sha256:") == strings.TrimPrefix(id, "sha256:")
	}) {
		t.Error("bob sees the image alice committed")
	}

	for name, try := range map[string]func() error{
		"export of alice's container": func() error { _, err := bob.Export(ctx, alices, app); return err },
		"commit of alice's container": func() error { _, err := bob.Commit(ctx, alices, app, backends.CommitOptions{}); return err },
		"commit over alice's name":    func() error { _, err := bob.Commit(ctx, bobs, app, backends.CommitOptions{Reference: ref}); return err },
		"commit over the shared test image": func() error {
			_, err := bob.Commit(ctx, bobs, app, backends.CommitOptions{Reference: testImage})
			return err
		},
		"commit into cornus's own repository": func() error {
			_, err := bob.Commit(ctx, bobs, app, backends.CommitOptions{Reference: caretaker.AgentRepo + ":evil"})
			return err
		},
	} {
		if err := try(); !errdefs.IsNotFound(err) && !errdefs.IsPermissionDenied(err) {
			t.Errorf("bob's %s: want a refusal, got %v", name, err)
		}
	}
	if img, err := imgs.InspectImage(ctx, ref); err != nil || strings.TrimPrefix(img.ID, "sha256:") != strings.TrimPrefix(id, "sha256:") {
		t.Errorf("after bob's tries alice's %s is %s (%v), want %s", ref, img.ID, err, id)
	}
	if _, err := alice.Commit(ctx, alices, engine.CopyOptions{Service: "app", Index: 2}, backends.CommitOptions{}); err == nil || !strings.Contains(err.Error(), "no container 2") {
		t.Errorf("a replica the service lacks: %v", err)
	}
}

// tarEntries reads the names of a tar stream and closes it.
func tarEntries(t *testing.T, rc io.ReadCloser) []string {
	t.Helper()
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatalf("read the tar: %v", err)
		}
		names = append(names, strings.TrimPrefix(h.Name, "./"))
	}
}
