package server

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/engine"
)

// TestCopyTenancy: compose cp through the server reaches the tenant's own
// service containers, both ways; another tenant can neither read from
// nor write into them (the answer is the same as for a project that does
// not exist), and a path outside the query is refused before anything.
func TestCopyTenancy(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	alices := uniqueProject("alice-cp-")
	ts.upAs(ts.alice, sleeperProject(alices))
	t.Cleanup(func() { ts.down(alices) })
	alice, bob := ts.projectsOf(ts.alice), ts.projectsOf(ts.bob)
	to := engine.CopyOptions{Service: "app"}

	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	body := "alice-wrote-this\n"
	if err := tw.WriteHeader(&tar.Header{Name: "note", Mode: 0o644, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write([]byte(body))
	_ = tw.Close()
	var openErr error // an archive that can always be opened
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tb.Bytes())), openErr }
	if err := alice.CopyTo(ctx, alices, to, "/tmp", open); err != nil {
		t.Fatalf("alice's copy in: %v", err)
	}
	rc, st, err := alice.CopyFrom(ctx, alices, to, "/tmp/note")
	if err != nil {
		t.Fatalf("alice's copy out: %v", err)
	}
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	got, _ := io.ReadAll(tr)
	rc.Close()
	if err != nil || hdr.Name != "note" || string(got) != body || st.Size != int64(len(body)) {
		t.Fatalf("alice's copy out: %v %+v %q, stat %+v", err, hdr, got, st)
	}

	for name, try := range map[string]func() error{
		"copy out": func() error { _, _, err := bob.CopyFrom(ctx, alices, to, "/tmp/note"); return err },
		"stat":     func() error { _, err := bob.StatPath(ctx, alices, to, "/tmp/note"); return err },
		"copy in":  func() error { return bob.CopyTo(ctx, alices, to, "/tmp", open) },
	} {
		if err := try(); !errdefs.IsNotFound(err) && !errdefs.IsPermissionDenied(err) {
			t.Errorf("bob's %s in alice's project: want a refusal, got %v", name, err)
		}
	}
	if _, _, err := alice.CopyFrom(ctx, alices, engine.CopyOptions{Service: "app", Index: 2}, "/tmp/note"); err == nil || !strings.Contains(err.Error(), "no container 2") {
		t.Fatalf("a replica the service lacks: %v", err)
	}
}
