package fuse

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
)

// assertGone checks that nothing of the mount is left: no mountinfo entry
// and no fusermount helper.
func assertGone(t *testing.T, mnt string) {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(info), " "+escapeMountinfo(mnt)+" ") {
		t.Errorf("%s still in /proc/self/mountinfo", mnt)
	}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		if b, err := os.ReadFile(c); err == nil && strings.HasPrefix(string(b), "fusermount") {
			t.Errorf("a fusermount process is left: %s", c)
		}
	}
}

// within fails the test if f does not return in d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// Locks down issue 12 (lifecycle): the export dies mid-write; the writer
// gets ENOTCONN or EIO, not a hang, and Unmount leaves nothing behind.
func TestExportKilledMidWrite(t *testing.T) {
	fx := mountFixture(t, export.Options{}, Options{})
	f, err := os.Create(filepath.Join(fx.mnt, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	werr := make(chan error, 1)
	go func() {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if _, err := f.Write(chunk); err != nil {
				werr <- err
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	fx.cancelExport() // the client side goes away (its end of the stream closes)
	select {
	case err := <-werr:
		if !errors.Is(err, syscall.ENOTCONN) && !errors.Is(err, syscall.EIO) {
			t.Fatalf("write after the export died: %v, want ENOTCONN or EIO", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("write hangs after the export died")
	}
	if _, err := os.Stat(filepath.Join(fx.mnt, "other")); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("stat after the export died: %v, want ENOTCONN", err)
	}
	f.Close()
	within(t, 15*time.Second, "Unmount", func() {
		if err := fx.fs.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	within(t, 5*time.Second, "Wait", fx.fs.Wait)
	assertGone(t, fx.mnt)
}

// Locks down issue 12 (lifecycle): Unmount of a busy mount still leaves
// nothing mounted and ends the FUSE loop; the open file then fails.
func TestUnmountBusy(t *testing.T) {
	fx := mountFixture(t, export.Options{}, Options{})
	write(t, filepath.Join(fx.src, "held"), "held open")
	f, err := os.Open(filepath.Join(fx.mnt, "held"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	within(t, 30*time.Second, "Unmount", func() {
		if err := fx.fs.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	within(t, 5*time.Second, "Wait", fx.fs.Wait)
	assertGone(t, fx.mnt)
	if _, err := f.ReadAt(make([]byte, 4), 0); err == nil {
		t.Fatal("read of a file on an unmounted, aborted mount succeeded")
	}
}

// Locks down the Mount contract: the mount ends with its context.
func TestContextEndsMount(t *testing.T) {
	needFUSE(t)
	base := t.TempDir()
	src, mnt := filepath.Join(base, "src"), filepath.Join(base, "mnt")
	for _, d := range []string{src, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ec, mc := socketpair(t)
	go func() { _ = export.Serve(context.Background(), ec, src, export.Options{}) }() // ends when the connection does
	ctx, cancel := context.WithCancel(context.Background())
	m, err := Mount(ctx, mc, mnt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Unmount() })
	cancel()
	within(t, 15*time.Second, "Wait after the context ended", m.Wait)
	assertGone(t, mnt)
}

// Locks down what a dev loop does on the mount: git init, add, commit,
// status, and a rename-over save.
func TestGitOnMount(t *testing.T) {
	eachExport(t, func(t *testing.T, eo export.Options) {
		git, err := exec.LookPath("git")
		if err != nil {
			t.Skip("git not installed")
		}
		fx := mountFixture(t, eo, Options{})
		run := func(args ...string) string {
			t.Helper()
			// -C, not cmd.Dir: a child that changes into the mount between
			// fork and exec waits on this process's FUSE server while the
			// runtime may be stopping the world for the forking thread, a
			// deadlock.
			cmd := exec.Command(git, append([]string{"-C", fx.mnt}, args...)...)
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "HOME="+fx.base)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			return string(out)
		}
		run("init", "-q", "-b", "main")
		write(t, filepath.Join(fx.mnt, "a.txt"), "one\n")
		run("add", "a.txt")
		run("commit", "-q", "-m", "first")
		write(t, filepath.Join(fx.mnt, "a.tmp"), "two\n")
		if err := os.Rename(filepath.Join(fx.mnt, "a.tmp"), filepath.Join(fx.mnt, "a.txt")); err != nil {
			t.Fatal(err)
		}
		if st := run("status", "--porcelain"); st != " M a.txt\n" {
			t.Fatalf("git status = %q", st)
		}
		if log := run("-C", fx.src, "log", "--format=%s"); log != "first\n" { // the later -C wins
			t.Fatalf("git log in the export = %q", log)
		}
	})
}
