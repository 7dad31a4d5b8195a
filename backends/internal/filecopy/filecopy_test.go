package filecopy

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// Locks down the secrets tar: owners and modes as given (0444 default),
// parent directories only where missing.
func TestFilesTar(t *testing.T) {
	exists := func(d string) (bool, error) { return d == "/run", nil }
	data, err := Tar([]backends.File{
		{Target: "/run/secrets/a", Content: []byte("x"), UID: 5, GID: 6, Mode: 0o400},
		{Target: "/run/secrets/b", Content: []byte("yy")},
	}, exists, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(data))
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
		switch h.Name {
		case "run/secrets/a":
			if h.Uid != 5 || h.Gid != 6 || h.Mode != 0o400 {
				t.Errorf("a: %+v", h)
			}
		case "run/secrets/b":
			if h.Mode != 0o444 || h.Size != 2 {
				t.Errorf("b: %+v", h)
			}
		}
	}
	if want := "run/secrets/ run/secrets/a run/secrets/b"; strings.Join(got, " ") != want {
		t.Fatalf("entries %q, want %q", strings.Join(got, " "), want)
	}
	if _, err := Tar([]backends.File{{Target: "/"}}, exists, time.Now()); err == nil {
		t.Fatal("target / accepted")
	}
}
