//go:build linux

package export

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// layout makes base/{src,outside}: src holds a file, a directory and links
// planted to leave it; outside holds a secret.
func layout(t testing.TB) (src, outside string) {
	t.Helper()
	base := t.TempDir()
	src, outside = filepath.Join(base, "src"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(src, "dir"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range map[string]string{filepath.Join(src, "file"): "inside", filepath.Join(outside, "secret"): "secret"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for target, link := range map[string]string{"/etc": "etc", "../outside": "up", outside: "out", "../outside/secret": "secretlink", "..": "dotdot"} {
		if err := os.Symlink(target, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	return src, outside
}

// impls are the two confinements: openat2 (Linux's) and the portable
// one (every other system's), both tested here.
var impls = []struct {
	name string
	o    Options
}{{"openat2", Options{}}, {"portable", Options{Portable: true}}}

// eachImpl runs f as a subtest per confinement, with o selecting it.
func eachImpl(t *testing.T, f func(t *testing.T, o Options)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { f(t, im.o) })
	}
}

// rootNode opens src as an export and returns its root, in process.
func rootNode(t testing.TB, src string, o Options) p9.File {
	t.Helper()
	var (
		a   p9.Attacher
		err error
	)
	if o.Portable {
		var tr *ptree
		if tr, err = openPTree(src, "", o); err == nil {
			t.Cleanup(tr.close)
			a = tr
		}
	} else {
		var tr *tree
		if tr, err = openTree(src, "", o); err == nil {
			t.Cleanup(tr.close)
			a = tr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Attach()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// identity is the device and inode a node of either export names.
func identity(t testing.TB, f p9.File) [2]uint64 {
	t.Helper()
	switch n := f.(type) {
	case *node:
		var st unix.Stat_t
		if err := unix.Fstat(n.fd, &st); err != nil {
			t.Fatal(err)
		}
		return [2]uint64{st.Dev, st.Ino}
	case *pnode:
		r, name := n.at()
		fi, err := r.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		dev, ino := fileID(fi)
		return [2]uint64{dev, ino}
	}
	t.Fatalf("%T is no export node", f)
	return [2]uint64{}
}

// client serves src over a socketpair and attaches a 9P client to it.
func client(t *testing.T, src string, o Options) p9.File {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, a, src, o) }()
	c, err := p9.NewClient(b)
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Attach("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v, want context.Canceled", err)
		}
	})
	return root
}

func walk(t *testing.T, f p9.File, names ...string) p9.File {
	t.Helper()
	_, c, err := f.Walk(names)
	if err != nil {
		t.Fatalf("walk %q: %v", names, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Locks down issue 12: over the wire, nothing outside the exported
// directory can be reached, named or changed.
func TestConfinedOverTheWire(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, outside := layout(t)
		root := client(t, src, o)
		for _, names := range [][]string{{".."}, {"etc", "passwd"}, {"up", "secret"}, {"dotdot", "outside"}, {"dir", "..", ".."}, {"a/b"}} {
			if _, f, err := root.Walk(names); err == nil {
				f.Close()
				t.Errorf("walk %q succeeded", names)
			}
		}
		link := walk(t, root, "secretlink")
		if _, _, err := link.Open(p9.ReadOnly); err == nil { // the p9 server says EINVAL, the export ELOOP
			t.Error("open of a symlink succeeded")
		}
		if target, err := walk(t, root, "etc").Readlink(); err != nil || target != "/etc" {
			t.Errorf("readlink etc = %q, %v", target, err)
		}
		dir := walk(t, root)
		if _, _, _, err := dir.Create("secretlink", p9.WriteOnly, 0o644, 0, 0); err == nil {
			t.Error("create over a planted link succeeded")
		}
		if err := root.RenameAt("file", walk(t, root, "out"), "file"); err == nil {
			t.Error("rename into a planted link succeeded")
		}
		if err := root.Link(walk(t, root, "secretlink"), "hl"); err != nil {
			t.Errorf("link of a symlink: %v", err)
		}
		if fi, err := os.Lstat(filepath.Join(src, "hl")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("hl is %v, %v; want the link itself", fi, err)
		}
		if _, err := root.Mknod("null", p9.ModeCharacterDevice|0o666, 1, 3, 0, 0); !is(err, syscall.EPERM) {
			t.Errorf("mknod of a char device: %v, want EPERM", err)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret" {
			t.Errorf("secret changed to %q", b)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Errorf("outside has %d entries, want 1", len(ents))
		}
	})
}

// Locks down the names the export accepts, in process (without the p9
// server's own checks in front).
func TestBadNamesInProcess(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		root := rootNode(t, src, o)
		bad := []string{"", ".", "..", "a/b", "/etc", "../outside", "x\x00y", string(make([]byte, 256))}
		for _, name := range bad {
			if _, _, err := root.Walk([]string{name}); err == nil {
				t.Errorf("walk %q succeeded", name)
			}
			if _, _, _, err := root.Create(name, p9.WriteOnly, 0o644, 0, 0); err == nil {
				t.Errorf("create %q succeeded", name)
			}
			if _, err := root.Mkdir(name, 0o755, 0, 0); err == nil {
				t.Errorf("mkdir %q succeeded", name)
			}
			if err := root.RenameAt("file", root, name); err == nil {
				t.Errorf("rename to %q succeeded", name)
			}
			if err := root.UnlinkAt(name, 0); err == nil {
				t.Errorf("unlink %q succeeded", name)
			}
		}
	})
}

// Locks down issue 12: a read-only export refuses every mutation with
// EROFS on its own side.
func TestReadOnlyExport(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		o.ReadOnly = true
		root := client(t, src, o)
		file := walk(t, root, "file")
		ops := map[string]func() error{
			"open for write": func() error { _, _, err := walk(t, file).Open(p9.WriteOnly); return err },
			"create":         func() error { _, _, _, err := walk(t, root).Create("n", p9.ReadOnly, 0o644, 0, 0); return err },
			"mkdir":          func() error { _, err := root.Mkdir("n", 0o755, 0, 0); return err },
			"symlink":        func() error { _, err := root.Symlink("file", "n", 0, 0); return err },
			"link":           func() error { return root.Link(file, "n") },
			"mknod":          func() error { _, err := root.Mknod("n", p9.ModeNamedPipe|0o644, 0, 0, 0, 0); return err },
			"rename":         func() error { return root.RenameAt("file", root, "n") },
			"unlink":         func() error { return root.UnlinkAt("file", 0) },
			"truncate":       func() error { return file.SetAttr(p9.SetAttrMask{Size: true}, p9.SetAttr{}) },
			"chmod":          func() error { return file.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o600}) },
			"utimes":         func() error { return file.SetAttr(p9.SetAttrMask{MTime: true}, p9.SetAttr{}) },
		}
		for name, op := range ops {
			if err := op(); !is(err, syscall.EROFS) {
				t.Errorf("%s: %v, want EROFS", name, err)
			}
		}
		f := walk(t, file)
		if _, _, err := f.Open(p9.ReadOnly); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		if n, err := f.ReadAt(buf, 0); string(buf[:n]) != "inside" || (err != nil && !errors.Is(err, io.EOF)) {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
	})
}

// Locks down the single-file export: only that name exists in the root,
// and it cannot be removed or replaced.
func TestServeFileShowsOneName(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		a, b := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _ = ServeFile(ctx, a, filepath.Join(src, "file"), o) }() // ends with the test's cancel
		c, err := p9.NewClient(b)
		if err != nil {
			t.Fatal(err)
		}
		root, err := c.Attach("")
		if err != nil {
			t.Fatal(err)
		}
		dir := walk(t, root)
		if _, _, err := dir.Open(p9.ReadOnly); err != nil {
			t.Fatal(err)
		}
		ents, err := dir.Readdir(0, 64<<10)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name)
		}
		if !slices.Equal(names, []string{"file"}) {
			t.Fatalf("readdir = %q, want [file]", names)
		}
		if _, f, err := root.Walk([]string{"dir"}); err == nil {
			f.Close()
			t.Error("walk to a sibling of the exported file succeeded")
		}
		if err := root.UnlinkAt("file", 0); !is(err, syscall.EPERM) {
			t.Errorf("unlink of the exported file: %v, want EPERM", err)
		}
		if _, _, _, err := walk(t, root).Create("new", p9.WriteOnly, 0o644, 0, 0); !is(err, syscall.EPERM) {
			t.Errorf("create beside the exported file: %v, want EPERM", err)
		}
		f := walk(t, root, "file")
		if _, _, err := f.Open(p9.WriteOnly); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("edited"), 0); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(src, "file")); string(b) != "edited" {
			t.Fatalf("file = %q", b)
		}
		if err := ServeFile(ctx, nopConn{}, filepath.Join(src, "dir"), o); err == nil {
			t.Error("ServeFile of a directory succeeded")
		}
	})
}

type nopConn struct{ net.Conn }

func (nopConn) Close() error { return nil }

// is reports whether a 9P error carries errno e.
func is(err error, e syscall.Errno) bool {
	var le linux.Errno
	return errors.As(err, &le) && syscall.Errno(le) == e || errors.Is(err, e)
}

// Locks down issue 27: exporting from Windows, the export refuses names
// NTFS would refuse or alias, before any call (the rules run here on Linux
// by switching them on).
func TestWindowsNamesRefused(t *testing.T) {
	windowsNames = true
	t.Cleanup(func() { windowsNames = false })
	src, _ := layout(t)
	root := rootNode(t, src, Options{Portable: true})
	for _, name := range []string{"a:b", "con.txt", "trail."} {
		if _, _, _, err := root.Create(name, p9.WriteOnly, 0o644, 0, 0); !is(err, syscall.EINVAL) {
			t.Errorf("create %q: %v, want EINVAL", name, err)
		}
		if _, err := root.Mkdir(name, 0o755, 0, 0); !is(err, syscall.EINVAL) {
			t.Errorf("mkdir %q: %v, want EINVAL", name, err)
		}
		if err := root.RenameAt("file", root, name); !is(err, syscall.EINVAL) {
			t.Errorf("rename to %q: %v, want EINVAL", name, err)
		}
	}
	if ents, _ := os.ReadDir(src); len(ents) != 7 {
		t.Errorf("src holds %d entries, want the layout's 7", len(ents))
	}
}

// The peer (a container, maybe root) plants no set-id file in the
// client's tree: in process, where no 9P wire masks the bits, a chmod
// asking for set-user-ID (or set-group-ID on a file) is refused, and a
// create's set-id bits are dropped; a directory's set-group-ID stays.
func TestSetIDRefused(t *testing.T) {
	eachImpl(t, func(t *testing.T, o Options) {
		src, _ := layout(t)
		root := rootNode(t, src, o)
		file := walk(t, root, "file")
		for _, mode := range []p9.FileMode{0o4755, 0o2755} {
			if err := file.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: mode}); !is(err, syscall.EPERM) {
				t.Errorf("chmod %o: %v, want EPERM", mode, err)
			}
		}
		if _, _, _, err := walk(t, root).Create("made", p9.WriteOnly, 0o6755, 0, 0); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"file", "made"} {
			fi, err := os.Lstat(filepath.Join(src, name))
			if err != nil || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
				t.Errorf("%s: %v %v, want no set-id bit", name, fi.Mode(), err)
			}
		}
		if err := os.Mkdir(filepath.Join(src, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := walk(t, root, "d").SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o2755}); err != nil {
			t.Errorf("chmod g+s of a directory: %v", err)
		}
	})
}
