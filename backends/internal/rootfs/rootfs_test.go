package rootfs

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// hostile is a root whose links all point out of it, as a container could
// plant them, beside a host directory that must never be touched.
func hostile(t *testing.T) (root, host string) {
	t.Helper()
	base := t.TempDir()
	root, host = filepath.Join(base, "root"), filepath.Join(base, "host")
	for _, d := range []string{root + "/tmp", root + "/data", host} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte("host-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "data", "file"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"abs": host, "up": "../host", "tmp/dotdot": "../../host", "data/self": "/data"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, host
}

func tarOf(t *testing.T, files map[string]string) io.Reader {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	return &b
}

func openRoot(t *testing.T, dir string) *Root {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Writes through planted links land inside the root, never on the host.
func TestExtractStaysInside(t *testing.T) {
	root, host := hostile(t)
	r := openRoot(t, root)
	for _, dir := range []string{"/abs", "/up", "/tmp/dotdot", "/"} {
		if err := r.Extract(dir, tarOf(t, map[string]string{"abs/through-link": "y"})); err != nil && !errdefs.IsNotFound(err) {
			t.Fatalf("extract into %s: %v", dir, err)
		}
	}
	if err := r.Extract("/", tarOf(t, map[string]string{"planted": "x"})); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(host)
	if len(entries) != 1 {
		t.Fatalf("the host directory was written to: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "planted")); string(b) != "x" {
		t.Fatalf("extract into / wrote %q", b)
	}
}

// An entry naming a path through a link that the tar itself made earlier
// resolves inside the root too.
func TestExtractLinkThenFile(t *testing.T) {
	root, host := hostile(t)
	r := openRoot(t, root)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "esc", Typeflag: tar.TypeSymlink, Linkname: host}); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "esc/pwned", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	_ = r.Extract("/tmp", &b)
	if _, err := os.Stat(filepath.Join(host, "pwned")); err == nil {
		t.Fatal("a tar escaped through its own symlink")
	}
}

// Reads resolve links as the container would: an absolute link is
// relative to the root.
func TestArchiveAndStat(t *testing.T) {
	root, _ := hostile(t)
	r := openRoot(t, root)
	st, err := r.Lstat("/abs")
	if err != nil || st.Mode&os.ModeSymlink == 0 {
		t.Fatalf("lstat of a link: %+v %v", st, err)
	}
	if _, err := r.Lstat("/abs/secret"); !errdefs.IsNotFound(err) {
		t.Fatalf("lstat through an escaping link: %v", err)
	}
	var out bytes.Buffer
	if err := r.Archive("/data/self", &out); err != nil { // a link: archived as one
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Archive("/data", &b); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&b)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		names = append(names, h.Name)
		if h.Name == "data/file" {
			body, _ := io.ReadAll(tr)
			if string(body) != "inside" {
				t.Fatalf("data/file = %q", body)
			}
		}
	}
	if got := strings.Join(names, ","); got != "data/,data/file,data/self" {
		t.Fatalf("entries %s", got)
	}
	if strings.Contains(b.String(), "host-secret") {
		t.Fatal("archive read a host file")
	}
}

func TestLookupUser(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1001:app:/home/app:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "group"), []byte("root:x:0:\nstaff:x:50:app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, root)
	for spec, want := range map[string]User{
		"app": {1000, 1001, "/home/app"}, "app:staff": {1000, 50, "/home/app"}, "1000": {1000, 1001, "/home/app"},
		"4242": {4242, 0, ""}, "app:7": {1000, 7, "/home/app"}, "0": {0, 0, "/root"},
	} {
		if got, err := r.LookupUser(spec); err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", spec, got, err, want)
		}
	}
	for _, bad := range []string{"nobody", "app:nogroup"} {
		if _, err := r.LookupUser(bad); !errdefs.IsNotFound(err) {
			t.Errorf("%s: want NotFound, got %v", bad, err)
		}
	}
}
