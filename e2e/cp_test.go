package e2e

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const cpCompose = `services:
  app:
    image: cornus-test/busybox:1
    scale: 2
    command: ["sh", "-c", "trap 'exit 0' TERM; while sleep 1 & wait $$!; do :; done"]
`

// TestComposeCp: compose cp both ways, as docker cp does: a directory
// (with a subdirectory and a symlink) into a directory, a file as a new
// name, into every replica or one (--index), back out, a directory's
// content (SRC/.), a tar on stdout and from stdin; bad arguments refused.
// On the lane's backend, locally and through a server.
func TestComposeCp(t *testing.T) {
	daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, cpCompose, env...)
		p.must("compose", "up", "-d")
		local := t.TempDir()
		src := filepath.Join(local, "src")
		if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(src, "a.txt"), "alpha\n")
		writeFile(t, filepath.Join(src, "sub", "b.txt"), "beta\n")
		if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
			t.Fatal(err)
		}
		sh := func(index, cmd string) string {
			return p.must("compose", "exec", "-T", "--index", index, "app", "sh", "-c", cmd)
		}

		p.must("compose", "cp", src, "app:/tmp/")
		p.must("compose", "cp", "--index", "2", filepath.Join(src, "a.txt"), "app:/tmp/renamed.txt")
		for _, i := range []string{"1", "2"} {
			if got := sh(i, "cat /tmp/src/a.txt /tmp/src/sub/b.txt; readlink /tmp/src/link"); got != "alpha\nbeta\na.txt\n" {
				t.Fatalf("replica %s after cp src app:/tmp/: %q", i, got)
			}
		}
		if got := sh("2", "cat /tmp/renamed.txt"); got != "alpha\n" {
			t.Fatalf("cp --index 2 FILE app:/tmp/renamed.txt: %q", got)
		}
		if out, _, code := p.run("compose", "exec", "-T", "--index", "1", "app", "cat", "/tmp/renamed.txt"); code == 0 {
			t.Fatalf("cp --index 2 reached replica 1 too: %q", out)
		}

		sh("2", "echo from-two > /tmp/src/sub/two.txt")
		back := filepath.Join(local, "back")
		p.must("compose", "cp", "--index", "2", "app:/tmp/src", back)
		for name, want := range map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n", "sub/two.txt": "from-two\n", "link": "alpha\n"} {
			if got, err := os.ReadFile(filepath.Join(back, name)); err != nil || string(got) != want {
				t.Errorf("cp app:/tmp/src %s: %s is %q %v, want %q", back, name, got, err, want)
			}
		}
		if target, err := os.Readlink(filepath.Join(back, "link")); err != nil || target != "a.txt" {
			t.Errorf("the symlink came back as %q %v, want a link to a.txt", target, err)
		}
		contents := filepath.Join(local, "contents")
		if err := os.Mkdir(contents, 0o755); err != nil {
			t.Fatal(err)
		}
		p.must("compose", "cp", "app:/tmp/src/sub/.", contents)
		if names := dirNames(t, contents); !slices.Equal(names, []string{"b.txt"}) {
			t.Errorf("cp app:/tmp/src/sub/. DIR: %v, want the content alone", names)
		}

		if names := tarNames(t, p.must("compose", "cp", "app:/tmp/src/sub", "-")); !slices.Equal(names, []string{"sub", "sub/b.txt"}) {
			t.Errorf("cp app:/tmp/src/sub -: %v", names)
		}
		var tb bytes.Buffer
		tw := tar.NewWriter(&tb)
		_ = tw.WriteHeader(&tar.Header{Name: "stdin.txt", Mode: 0o644, Size: 6})
		_, _ = tw.Write([]byte("gamma\n"))
		_ = tw.Close()
		if _, errOut, code := p.runIn(&tb, "compose", "cp", "-", "app:/tmp"); code != 0 {
			t.Fatalf("cp - app:/tmp: exit %d\n%s", code, errOut)
		}
		if got := sh("1", "cat /tmp/stdin.txt"); got != "gamma\n" {
			t.Fatalf("cp - app:/tmp: %q", got)
		}

		for _, bad := range []struct {
			args []string
			says string
		}{
			{[]string{"app:/tmp/src", "app:/tmp/x"}, "between services"},
			{[]string{src, filepath.Join(local, "x")}, "SERVICE:PATH"},
			{[]string{"app:/tmp/src", filepath.Join(local, "back", "a.txt")}, "cannot copy a directory to a file"},
			{[]string{"app:/tmp/nope", filepath.Join(local, "nope")}, "/tmp/nope"},
			{[]string{"nosuch:/tmp", local}, "nosuch"},
		} {
			if _, errOut, code := p.run(append([]string{"compose", "cp"}, bad.args...)...); code == 0 || !strings.Contains(errOut, bad.says) {
				t.Errorf("cp %v: exit %d, want an error saying %q\n%s", bad.args, code, bad.says, errOut)
			}
		}
		if _, err := os.Stat(filepath.Join(local, "nope")); err == nil {
			t.Error("a failed copy left its destination")
		}
	})
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func tarNames(t *testing.T, data string) []string {
	t.Helper()
	tr := tar.NewReader(strings.NewReader(data))
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the tar on stdout: %v", err)
		}
		names = append(names, strings.TrimSuffix(hdr.Name, "/")) // podman names directories without the slash
	}
	slices.Sort(names)
	return names
}
