package incus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// recorder notes the method and path of every request the client sends.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// docs/incus.md's claim, against the real incusd: an image is converted and
// uploaded once; loading the same image again (same image ID, another
// tag) sends no upload and only points the new alias at the image Incus
// already holds. Conversion happens only on the way to an upload, so no
// upload means no conversion.
func TestLoadImageTwiceUploadsOnce(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	tag := hex.EncodeToString(suffix)
	// A file of this test's own makes an image ID no other test loaded.
	files := map[string]string{"/etc/cornus-load-once": tag + "\n"}
	ref1, ref2 := "cornus-test/load-once:"+tag+"-a", "cornus-test/load-once:"+tag+"-b"
	archive := func(ref string) *bytes.Buffer {
		var buf bytes.Buffer
		if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: ref, Files: files}); err != nil {
			t.Fatal(err)
		}
		return &buf
	}
	t.Cleanup(func() {
		for _, ref := range []string{ref2, ref1} {
			if err := b.RemoveImage(context.Background(), ref, true); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	rec := &recorder{next: b.cli.http.Transport}
	b.cli.http.Transport = rec
	count := func(method, path string) int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		n := 0
		for _, r := range rec.reqs {
			if r == method+" "+path {
				n++
			}
		}
		rec.reqs = nil
		return n
	}

	if _, err := b.LoadImage(ctx, archive(ref1)); err != nil {
		t.Fatalf("first load: %v", err)
	}
	if n := count("POST", "/1.0/images"); n != 1 {
		t.Fatalf("first load sent %d uploads, want 1", n)
	}
	first, err := b.imageByRef(ctx, ref1)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := b.LoadImage(ctx, archive(ref2))
	if err != nil {
		t.Fatalf("second load: %v", err)
	}
	if n := count("POST", "/1.0/images"); n != 0 {
		t.Fatalf("second load of the same image sent %d uploads, want none (no conversion)", n)
	}
	second, err := b.imageByRef(ctx, ref2)
	if err != nil {
		t.Fatal(err)
	}
	if second.Fingerprint != first.Fingerprint || !second.UploadedAt.Equal(first.UploadedAt) || len(refs) != 1 || refs[0] != ref2 {
		t.Fatalf("second load: image %s uploaded %v (refs %v), want the first's %s uploaded %v", second.Fingerprint, second.UploadedAt, refs, first.Fingerprint, first.UploadedAt)
	}
	var all []image
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/images", query: url.Values{"recursion": {"1"}}}, &all); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, img := range all {
		if img.Properties[propID] == first.Properties[propID] {
			n++
		}
	}
	if n != 1 || len(second.Aliases) != 2 {
		t.Fatalf("incus holds %d images of ID %s (want 1), with aliases %v (want both tags)", n, first.Properties[propID], second.Aliases)
	}
}
