package dockerhost

import (
	"bytes"
	"slices"
	"strings"
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

// Locks down the parsing of the image load stream (tagged and untagged
// images) and of the pull progress stream with its error message.
func TestLoadAndPullStreams(t *testing.T) {
	refs, err := loadedRefs(strings.NewReader(`{"stream":"Loaded image: a/b:1\n"}
{"stream":"Loaded image ID: sha256:abc\n"}
{"status":"Loading layer","progressDetail":{"current":1,"total":2},"id":"x"}`))
	if err != nil || !slices.Equal(refs, []string{"a/b:1", "sha256:abc"}) {
		t.Fatalf("loadedRefs: %v %v", err, refs)
	}
	if _, err := loadedRefs(strings.NewReader(`{"errorDetail":{"message":"bad tar"},"error":"bad tar"}`)); err == nil || err.Error() != "bad tar" {
		t.Fatalf("load error: %v", err)
	}
	var got []backends.PullProgress
	err = decodePull(strings.NewReader(`{"status":"Pulling from library/x","id":"1"}
{"status":"Downloading","progressDetail":{"current":5,"total":10},"id":"layer"}
{"errorDetail":{"message":"manifest unknown"}}`), func(p backends.PullProgress) { got = append(got, p) })
	if err == nil || err.Error() != "manifest unknown" || len(got) != 2 || got[1] != (backends.PullProgress{ID: "layer", Status: "Downloading", Current: 5, Total: 10}) {
		t.Fatalf("decodePull: %v %+v", err, got)
	}
	if err := decodePull(strings.NewReader(`{"status":"ok"}`), nil); err != nil {
		t.Fatalf("nil progress: %v", err)
	}
}
