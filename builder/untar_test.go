package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, link, body string
	typ              byte
}

func tarOf(t testing.TB, entries ...entry) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body))}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &b
}

// TestExtractContext: an uploaded build context (POST /build) lands in
// its directory and nowhere else, whatever its entries name or plant
// (issue 24: a build context never reads or writes outside it).
func TestExtractContext(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	for _, c := range []struct {
		name    string
		entries []entry
		wantErr string
	}{
		{"dot-dot", []entry{{name: "../escape", body: "x", typ: tar.TypeReg}}, "outside the context"},
		{"deep dot-dot", []entry{{name: "a/../../escape", body: "x", typ: tar.TypeReg}}, "outside the context"},
		{"through an absolute symlink", []entry{{name: "l", link: outside, typ: tar.TypeSymlink}, {name: "l/victim", body: "x", typ: tar.TypeReg}}, "escapes"},
		{"through a relative symlink", []entry{{name: "l", link: "../../../../../../" + outside, typ: tar.TypeSymlink}, {name: "l/victim", body: "x", typ: tar.TypeReg}}, "escapes"},
		{"a device", []entry{{name: "dev", typ: tar.TypeChar}}, "not allowed"},
		{"a fifo", []entry{{name: "fifo", typ: tar.TypeFifo}}, "not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			err := ExtractContext(tarOf(t, c.entries...), dir)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("want an error saying %q, got %v", c.wantErr, err)
			}
			if _, err := os.Lstat(victim); err == nil {
				t.Fatal("an entry was written outside the context")
			}
		})
	}

	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(tarOf(t,
		entry{name: "/abs/file", body: "abs", typ: tar.TypeReg},
		entry{name: "sub/", typ: tar.TypeDir},
		entry{name: "sub/a", body: "a", typ: tar.TypeReg},
		entry{name: "link", link: "sub/a", typ: tar.TypeSymlink},
		entry{name: "hard", link: "sub/a", typ: tar.TypeLink},
	).Bytes())
	_ = zw.Close()
	if err := ExtractContext(&gz, dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"abs/file": "abs", "sub/a": "a", "link": "a", "hard": "a"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "sub/a" {
		t.Errorf("link: %q %v: a symlink must stay a link", target, err)
	}
}

// FuzzExtractContext: no uploaded context (POST /build) makes the
// extraction panic or write outside its directory.
func FuzzExtractContext(f *testing.F) {
	f.Add(tarOf(f, entry{name: "a", body: "x", typ: tar.TypeReg}, entry{name: "l", link: "/etc", typ: tar.TypeSymlink}, entry{name: "l/x", body: "y", typ: tar.TypeReg}).Bytes())
	f.Add(tarOf(f, entry{name: "../up", body: "x", typ: tar.TypeReg}).Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "ctx")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = ExtractContext(bytes.NewReader(data), dir)
		entries, err := os.ReadDir(parent)
		if err != nil || len(entries) != 1 {
			t.Fatalf("the extraction wrote beside its directory: %v %v", entries, err)
		}
	})
}
