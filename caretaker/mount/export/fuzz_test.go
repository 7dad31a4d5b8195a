//go:build linux

package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// FuzzNames drives the export's name handling with arbitrary names: walks
// along '/'-separated components (and the whole input as one name), then
// create, mkdir, symlink, rename and link with it. Nothing reached may be
// outside the exported directory and nothing outside may change. Locks
// down issue 12's confinement ("fuzz the path handling"), for both
// confinements (issue 27).
func FuzzNames(f *testing.F) {
	for _, s := range []string{"..", "../outside/secret", "etc/passwd", "up/secret", "dotdot/outside", "dir/../../outside",
		"a\x00b", "/etc/passwd", "secretlink", "out/secret", ".", "dir/.", strings.Repeat("x", 300), "dir/file"} {
		f.Add(s)
	}
	src, outside := layout(f)
	base := filepath.Dir(src)
	roots := []p9.File{rootNode(f, src, Options{}), rootNode(f, src, Options{Portable: true})}
	forbidden := map[[2]uint64]string{}
	for _, p := range []string{"/", "/etc", "/etc/passwd", base, outside, filepath.Join(outside, "secret")} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err == nil {
			forbidden[[2]uint64{st.Dev, st.Ino}] = p
		}
	}
	keep := map[string]bool{}
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		keep[e.Name()] = true
	}

	f.Fuzz(func(t *testing.T, in string) {
		check := func(n p9.File) {
			if p, bad := forbidden[identity(t, n)]; bad {
				t.Fatalf("input %q reached %s", in, p)
			}
		}
		for _, root := range roots {
			walkAll(t, root, append(strings.Split(in, "/"), in), check)
			mutate(root, in)
		}
		// Nothing outside changed; restore the tree for the next input.
		if got, _ := os.ReadFile(filepath.Join(outside, "secret")); string(got) != "secret" {
			t.Fatalf("input %q changed the outside secret to %q", in, got)
		}
		for dir, want := range map[string][]string{outside: {"secret"}, base: {"outside", "src"}} {
			ents, _ := os.ReadDir(dir)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, want) {
				t.Fatalf("input %q: %s holds %q, want %q", in, dir, names, want)
			}
		}
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			if !keep[e.Name()] {
				os.RemoveAll(filepath.Join(src, e.Name()))
			}
		}
	})
}

// walkAll walks names one by one from root, checking each node reached,
// opening and reading the last.
func walkAll(t *testing.T, root p9.File, names []string, check func(p9.File)) {
	cur := root
	defer func() {
		if cur != root {
			cur.Close()
		}
	}()
	for _, name := range names {
		_, c, err := cur.Walk([]string{name})
		if err != nil {
			continue
		}
		check(c)
		if cur != root {
			cur.Close()
		}
		cur = c
	}
	if cur == root {
		return
	}
	if _, _, err := cur.Open(p9.ReadOnly); err == nil {
		buf := make([]byte, 64)
		if n, _ := cur.ReadAt(buf, 0); strings.Contains(string(buf[:n]), "secret") {
			t.Fatalf("read the secret through %q", names)
		}
	}
}

// mutate tries every name-taking mutation with name (and as a link
// target), undoing what succeeded.
func mutate(root p9.File, name string) {
	if f, _, _, err := root.Create(name, p9.WriteOnly, 0o644, 0, 0); err == nil {
		f.Close()
	}
	_, _ = root.Mkdir(name+"d", 0o755, 0, 0)
	_, _ = root.Symlink(name, "fuzzlink", 0, 0)
	if err := root.RenameAt("file", root, name); err == nil {
		_ = root.RenameAt(name, root, "file")
	}
	if _, f, err := root.Walk([]string{"file"}); err == nil {
		_ = root.Link(f, name+"l")
		f.Close()
	}
	_, _ = root.Mknod(name+"n", p9.ModeNamedPipe|0o644, 0, 0, 0, 0)
}
