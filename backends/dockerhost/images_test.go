package dockerhost

import (
	"bytes"
	"slices"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
)

// Locks down images: LoadImage reports the loaded ref, InspectImage maps
// the config and answers NotFound for missing images, ListImages and
// RemoveImage work. Nothing is pulled.
func TestImages(t *testing.T) {
	b := newTestBackend(t)
	ctx := testContext(t)
	ref := unique(t, "img") + ":1"
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: ref, Cmd: []string{"sh", "-c", "true"}}); err != nil {
		t.Fatal(err)
	}
	refs, err := b.LoadImage(ctx, &buf)
	if err != nil || !slices.Equal(refs, []string{ref}) {
		t.Fatalf("LoadImage: %v %v", err, refs)
	}
	t.Cleanup(func() { _ = b.RemoveImage(testContext(t), ref, true) })
	img, err := b.InspectImage(ctx, ref)
	if err != nil || !slices.Contains(img.Tags, ref) || !slices.Equal(img.Cmd, []string{"sh", "-c", "true"}) || img.OS != "linux" || img.WorkingDir != "/" || img.ID == "" {
		t.Fatalf("InspectImage: %v %+v", err, img)
	}
	list, err := b.ListImages(ctx)
	if err != nil || !slices.ContainsFunc(list, func(i backends.Image) bool { return slices.Contains(i.Tags, ref) }) {
		t.Fatalf("ListImages: %v", err)
	}
	if err := b.RemoveImage(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.InspectImage(ctx, ref); !errdefs.IsNotFound(err) {
		t.Fatalf("InspectImage of a removed image: %v (want NotFound)", err)
	}
}
