package dockerhost

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down secrets and configs: content, owner and mode as given, new
// parent directories created, existing ones left as they were.
func TestFiles(t *testing.T) {
	b, ctx := setup(t)
	c := createApp(t, b, unique(t, "proj"), spec.App{Name: "app", Command: sh("sleep 60")}, func(cs *backends.ResolveInput) {
		cs.Files = []backends.File{
			{Target: "/run/secrets/db_password", Content: []byte("s3cret"), UID: 1000, GID: 1000, Mode: 0o400},
			{Target: "/tmp/conf/app.conf", Content: []byte("a=1\n")},
			{Target: "/etc/app.yaml", Content: []byte("x: 1\n"), Mode: 0o640},
		}
	})
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"cat /run/secrets/db_password", "s3cret"},
		{"stat -c '%a %u %g' /run/secrets/db_password", "400 1000 1000"},
		{"stat -c '%a %u' /tmp/conf/app.conf", "444 0"},
		{"stat -c '%a' /etc/app.yaml", "640"},
		{"stat -c '%a' /tmp /etc", "1777\n755"},
	} {
		if code, out := execOut(t, b, c.ID, "sh", "-c", tc.cmd); code != 0 || trimmed(out) != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.cmd, code, out, tc.want)
		}
	}
}

// Locks down docker cp semantics: CopyTo extracts into a directory,
// StatPath and CopyFrom describe and return the path, missing paths are
// NotFound.
func TestCopy(t *testing.T) {
	b, ctx := setup(t)
	c := createApp(t, b, unique(t, "proj"), spec.App{Name: "app", Command: sh("sleep 60")})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "hello.txt", Mode: 0o600, Size: 5, Typeflag: tar.TypeReg})
	_, _ = tw.Write([]byte("hello"))
	_ = tw.Close()
	if err := b.CopyTo(ctx, c.ID, "/tmp", &buf); err != nil {
		t.Fatal(err)
	}
	st, err := b.StatPath(ctx, c.ID, "/tmp/hello.txt")
	if err != nil || st.Name != "hello.txt" || st.Size != 5 || st.Mode&0o777 != 0o600 {
		t.Fatalf("stat: %v %+v", err, st)
	}
	rc, st, err := b.CopyFrom(ctx, c.ID, "/tmp/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != "hello.txt" {
		t.Fatalf("tar: %v %+v", err, hdr)
	}
	if data, _ := io.ReadAll(tr); string(data) != "hello" || st.Size != 5 {
		t.Fatalf("content %q stat %+v", data, st)
	}
	if _, err := b.StatPath(ctx, c.ID, "/nope"); !errdefs.IsNotFound(err) {
		t.Fatalf("stat missing: %v (want NotFound)", err)
	}
	if err := b.CopyTo(ctx, c.ID, "/nope", bytes.NewReader(nil)); !errdefs.IsNotFound(err) {
		t.Fatalf("copy to missing dir: %v (want NotFound)", err)
	}
}
