package builder

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/plugins/content/local"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

func putBlob(t *testing.T, cs content.Store, mediaType string, data []byte) ocispec.Descriptor {
	t.Helper()
	desc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
	if err := content.WriteBlob(context.Background(), cs, desc.Digest.String(), bytes.NewReader(data), desc); err != nil {
		t.Fatal(err)
	}
	return desc
}

func image(t *testing.T, cs content.Store, mark string) ocispec.Descriptor {
	layer := putBlob(t, cs, ocispec.MediaTypeImageLayer, []byte("layer "+mark))
	cfg := putBlob(t, cs, ocispec.MediaTypeImageConfig, []byte(`{"mark":"`+mark+`"}`))
	mf, _ := json.Marshal(ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{layer}})
	return putBlob(t, cs, ocispec.MediaTypeImageManifest, mf)
}

// TestScopedStore: a build handed one image of the backend's store reads
// that image's blobs and no other's (another tenant's, on a server), and
// writes nothing.
func TestScopedStore(t *testing.T) {
	ctx := context.Background()
	cs, err := local.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := image(t, cs, "mine"), image(t, cs, "theirs")
	s, err := scopedStore(ctx, cs, mine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := content.ReadBlob(ctx, s, mine); err != nil {
		t.Fatalf("the image handed over: %v", err)
	}
	if _, err := content.ReadBlob(ctx, s, theirs); !errdefs.IsNotFound(err) {
		t.Fatalf("another image's manifest: %v", err)
	}
	if _, err := s.Info(ctx, theirs.Digest); !errdefs.IsNotFound(err) {
		t.Fatalf("another image's info: %v", err)
	}
	n := 0
	_ = s.Walk(ctx, func(content.Info) error { n++; return nil })
	if n != 3 {
		t.Fatalf("walk shows %d blobs, want the image's 3", n)
	}
	if err := s.Delete(ctx, mine.Digest); !errdefs.IsPermissionDenied(err) {
		t.Fatalf("delete: %v", err)
	}
}
