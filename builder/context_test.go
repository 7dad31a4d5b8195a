package builder

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// walk is the context's walk, sorted.
func walk(t *testing.T, src *source) []string {
	t.Helper()
	out := walkPaths(t, src.context, "")
	slices.Sort(out)
	return out
}

// TestSourceConfined: a build reads its context and nothing outside it:
// a symlink to a file elsewhere is sent as a link and never opened
// through (issue 24 item 7).
func TestSourceConfined(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, filepath.Dir(outside), map[string]string{"secret": "host secret"})
	dir := t.TempDir()
	write(t, dir, map[string]string{"Dockerfile": "FROM scratch\n", "a.txt": "a"})
	for name, target := range map[string]string{"abs": outside, "rel": "../../../../../../../../" + outside} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	src, err := openSource(context.Background(), LocalFiles{}, spec.Build{Context: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer src.cleanup()
	if got := walk(t, src); !slices.Equal(got, []string{"Dockerfile", "a.txt", "abs", "rel"}) {
		t.Fatalf("walk: %q", got)
	}
	for _, name := range []string{"abs", "rel"} {
		rc, err := src.context.Open(name)
		if err == nil {
			data, _ := io.ReadAll(rc)
			rc.Close()
			t.Fatalf("opening %s read %q from outside the context", name, data)
		}
	}
}

// TestSourceIgnoreFiles: the ignore file is applied before anything is
// sent: NAME.dockerignore beside the Dockerfile wins over .dockerignore,
// which is then hidden too (docker build's rule).
func TestSourceIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Dockerfile": "FROM scratch\n", "build/app.Dockerfile": "FROM scratch\n",
		".dockerignore": "*.log\n", "build/app.Dockerfile.dockerignore": "*.tmp\nsecret/\n",
		"a.log": "", "b.tmp": "", "secret/key": "", "keep.txt": "",
	})
	src, err := openSource(context.Background(), LocalFiles{}, spec.Build{Context: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := walk(t, src); !slices.Equal(got, []string{".dockerignore", "Dockerfile", "b.tmp", "build", "build/app.Dockerfile", "build/app.Dockerfile.dockerignore", "keep.txt", "secret", "secret/key"}) {
		t.Errorf(".dockerignore: %q", got)
	}
	src.cleanup()
	src, err = openSource(context.Background(), LocalFiles{}, spec.Build{Context: dir, Dockerfile: "build/app.Dockerfile"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.cleanup()
	if got := walk(t, src); !slices.Equal(got, []string{"Dockerfile", "a.log", "build", "build/app.Dockerfile", "build/app.Dockerfile.dockerignore", "keep.txt"}) {
		t.Errorf("app.Dockerfile.dockerignore: %q", got)
	}
}
