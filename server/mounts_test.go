package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker/mount"
	"github.com/cornus-dev/cornus/caretaker/mount/export"
	"github.com/cornus-dev/cornus/caretaker/mount/fuse"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// localFixture is a client-local mount deployment: a client in this
// process serving three sources over a real session to the test server.
type localFixture struct {
	ts                  *testServer
	project             string
	sess                *client.Session
	rw, ro, file, outer string
	projects            *client.Projects
}

// deployLocal deploys one sleeping app with rw → /work, ro → /ro:ro and
// a single file → /etc/single.conf, all client-local.
func deployLocal(t *testing.T, ts *testServer) *localFixture {
	t.Helper()
	base := t.TempDir()
	fx := &localFixture{ts: ts, project: uniqueProject("mnt"), rw: filepath.Join(base, "rw"), ro: filepath.Join(base, "ro"),
		file: filepath.Join(base, "conf", "single.conf"), outer: filepath.Join(base, "secret")}
	for _, d := range []string{fx.rw, fx.ro, filepath.Dir(fx.file)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(fx.rw, "seed.txt"), "from-client\n")
	write(t, filepath.Join(fx.ro, "keep.txt"), "read-only\n")
	write(t, fx.file, "one\n")
	write(t, filepath.Join(filepath.Dir(fx.file), "sibling"), "not exported\n")
	write(t, fx.outer, "secret\n")
	p := sleeperProject(fx.project)
	c, err := client.New(ts.http.URL, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if fx.sess, err = c.OpenSession(ctx, fx.project, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fx.sess.Close()
		// The server unmounts once the session's end removed the
		// containers; the temp dirs go only after that.
		deadline := time.Now().Add(30 * time.Second)
		for m, _ := mount.Mounted(ts.srv.mountsDir); len(m) > 0 && time.Now().Before(deadline); m, _ = mount.Mounted(ts.srv.mountsDir) {
			time.Sleep(50 * time.Millisecond)
		}
		if m, _ := mount.Sweep(ts.srv.mountsDir); len(m) > 0 {
			t.Errorf("still mounted 30 s after the session ended: %v", m)
		}
		zero := time.Duration(0)
		_ = ts.srv.e.Down(context.Background(), fx.project, engine.DownOptions{Timeout: &zero})
	})
	exp, err := client.NewExports(p, []client.LocalMount{
		{Source: fx.rw, Target: "/work"},
		{Service: "app", Source: fx.ro, Target: "/ro", ReadOnly: true},
		{Source: fx.file, Target: "/etc/single.conf"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fx.sess.Handle(api.OpMount, exp.Handler(ctx))
	fx.projects = &client.Projects{Client: c, Session: fx.sess.ID, LocalMounts: exp.Wire}
	if _, err := fx.projects.Up(ctx, p, engine.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	return fx
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sh runs a shell command in the app and returns its output and exit code.
func (fx *localFixture) sh(t *testing.T, script string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, err := fx.ts.srv.e.Exec(ctx, fx.project, engine.ExecOptions{Service: "app",
		ExecOptions: backends.ExecOptions{Cmd: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out}})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return out.String(), code
}

// refusesLocalMounts asserts the up-front refusal on a backend that does
// not take client-local mounts (the test then ends, passed).
func refusesLocalMounts(t *testing.T, ts *testServer) bool {
	t.Helper()
	err := ts.srv.checkLocalMounts(context.Background())
	if err == nil {
		return false
	}
	if !errdefs.IsNotImplemented(err) && !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("refusal of the %s backend is %v, want not implemented or a failed precondition", ts.b.Name(), err)
	}
	if ts.b.Name() == "containerd" && !strings.Contains(err.Error(), "CORNUS_CONTAINERD_REMOTE=1") {
		t.Fatalf("the containerd refusal does not name CORNUS_CONTAINERD_REMOTE=1: %v", err)
	}
	if _, v := remoteMode(ts.b); v != "" && !strings.Contains(err.Error(), v+"=1") {
		t.Fatalf("the %s refusal does not name its remote mode, %s=1: %v", ts.b.Name(), v, err)
	}
	t.Logf("the %s backend refuses client-local mounts up front, as it must: %v", ts.b.Name(), err)
	return true
}

// Issue 12: a container writes → the file is on the client; the client
// edits → the container reads it; :ro refuses writes; a single file is
// bound by its parent's export; nothing outside an export is reachable.
func TestLocalMounts(t *testing.T) {
	ts := newTestServer(t)
	if refusesLocalMounts(t, ts) {
		return
	}
	fx := deployLocal(t, ts)

	if out, code := fx.sh(t, "echo from-container > /work/out.txt && mkdir -p /work/d/e && echo deep > /work/d/e/f"); code != 0 {
		t.Fatalf("write through the mount: %d %s", code, out)
	}
	for name, want := range map[string]string{"out.txt": "from-container\n", "d/e/f": "deep\n"} {
		if b, err := os.ReadFile(filepath.Join(fx.rw, name)); err != nil || string(b) != want {
			t.Errorf("%s on the client: %q %v, want %q", name, b, err, want)
		}
	}
	if out, _ := fx.sh(t, "cat /work/seed.txt"); out != "from-client\n" {
		t.Errorf("seed through the mount: %q", out)
	}
	write(t, filepath.Join(fx.rw, "seed.txt"), "edited-on-client\n")
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := fx.sh(t, "cat /work/seed.txt")
		if out == "edited-on-client\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client's edit never showed in the container: %q", out)
		}
		time.Sleep(200 * time.Millisecond)
	}

	if out, code := fx.sh(t, "cat /ro/keep.txt && echo x > /ro/new"); code == 0 || !strings.Contains(out, "read-only") {
		t.Errorf("write to the :ro mount: exit %d %q, want a refusal", code, out)
	}
	if _, err := os.Stat(filepath.Join(fx.ro, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the :ro export took a write: %v", err)
	}

	if out, _ := fx.sh(t, "cat /etc/single.conf"); out != "one\n" {
		t.Errorf("single-file mount: %q", out)
	}
	if out, code := fx.sh(t, "echo two > /etc/single.conf && cat /etc/single.conf"); code != 0 || out != "two\n" {
		t.Errorf("write to the single file: %d %q", code, out)
	}
	if b, _ := os.ReadFile(fx.file); string(b) != "two\n" {
		t.Errorf("single file on the client: %q", b)
	}

	// Escapes: links the container makes point into the container's own
	// tree, never the client's; the file's siblings are not exported.
	escape := "ln -s " + fx.outer + " /work/abs; ln -s ../secret /work/rel; " +
		"cat /work/abs /work/rel /work/../secret " + fx.outer + " 2>&1; ln /work/seed.txt /tmp/hard 2>&1; ln /etc/hostname /work/hard 2>&1; ls /etc/single.conf/.. 2>&1; true"
	out, _ := fx.sh(t, escape)
	t.Logf("escape attempts:\n%s", out)
	if strings.Contains(out, "secret\n") || strings.Contains(out, "not exported") {
		t.Errorf("an escape reached the client's files outside the export:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(fx.rw, "seed.txt")); err != nil || string(b) != "edited-on-client\n" {
		t.Errorf("seed.txt after link attempts across the mount: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(fx.rw, "hard")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hard link into the export from outside it was made: %v", err)
	}
}

// Issue 12, lifecycle: when the session drops the server removes the
// deployment's containers first, then unmounts; nothing stays mounted and
// no FUSE goroutine is left.
func TestLocalMountsSessionDrop(t *testing.T) {
	ts := newTestServer(t)
	if refusesLocalMounts(t, ts) {
		return
	}
	g0 := fuseGoroutines()
	fx := deployLocal(t, ts)
	if out, code := fx.sh(t, "echo x > /work/x"); code != 0 {
		t.Fatalf("write: %d %s", code, out)
	}
	if m, _ := mount.Mounted(ts.srv.mountsDir); len(m) != 4 {
		t.Fatalf("mounts while deployed: %v, want 4 (rw, ro, the file's parent, the file pinned)", m)
	}
	// A writer keeps going while the client vanishes.
	go func() { _, _ = fx.sh(t, "while true; do echo w >> /work/log; done") }()
	time.Sleep(300 * time.Millisecond)
	_ = fx.sess.Close()
	start := time.Now()
	for {
		mounted, _ := mount.Mounted(ts.srv.mountsDir)
		containers := ts.containers(fx.project)
		if len(mounted) < 4 && len(containers) > 0 {
			t.Fatalf("unmounted (%d left) while %d containers still exist", len(mounted), len(containers))
		}
		if es, _ := os.ReadDir(ts.srv.mountsDir); len(mounted) == 0 && len(containers) == 0 && len(es) == 0 {
			break // unmounted, and the mountpoints removed after
		}
		if time.Since(start) > 20*time.Second {
			es, _ := os.ReadDir(ts.srv.mountsDir)
			t.Fatalf("after 20 s: %d containers, mounts %v, mountpoints %v", len(containers), mounted, es)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("containers removed, then unmounted, %v after the session dropped", time.Since(start).Round(time.Millisecond))
	deadline := time.Now().Add(5 * time.Second)
	for fuseGoroutines() > g0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if g := fuseGoroutines(); g > g0 {
		t.Errorf("FUSE goroutines %d → %d", g0, g)
	}
}

// The server mounts nothing for a detached session or without one, and
// a client cannot bind another session's mount directory.
func TestLocalMountsRefused(t *testing.T) {
	ts := newTestServer(t)
	p := sleeperProject(uniqueProject("mntno"))
	lm := []api.LocalMount{{Index: 0, Service: "app", Target: "/work"}}
	if _, err := ts.srv.mountLocal(context.Background(), nil, p, lm); err == nil {
		t.Error("client-local mounts without a session were accepted")
	}
	for _, bad := range [][]api.LocalMount{
		{{Index: 0, Service: "nope", Target: "/work"}},
		{{Index: 0, Service: "app", Target: "work"}},
		{{Index: 0, Service: "app", Target: "/"}},
		{{Index: -1, Service: "app", Target: "/w"}},
		{{Index: 0, Service: "app", Target: "/w", File: "../x"}},
		{{Index: 0, Service: "app", Target: "/w", File: "a"}, {Index: 0, Service: "app", Target: "/v"}},
	} {
		if err := validLocalMounts(p, bad); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%+v: %v, want invalid argument", bad, err)
		}
	}
	steal := p
	steal.Services = map[string]spec.App{"app": {Image: testImage, Mounts: []spec.Mount{{Source: filepath.Join(ts.srv.mountsDir, "someone", "0"), Target: "/x"}}}}
	if err := ts.srv.hostPolicy.Check(steal.Normalize()); !errdefs.IsPermissionDenied(err) {
		t.Errorf("a bind of the server's mount directory: %v, want refused", err)
	}
}

// fuseGoroutines counts goroutines running go-fuse code.
func fuseGoroutines() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("hanwen/go-fuse")) {
			n++
		}
	}
	return n
}

// A server killed with mounts up leaves them behind (their FUSE loops died
// with it): the next start detaches them and removes the mountpoints.
func TestSweepMountsAtStart(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("needs /dev/fuse")
	}
	root := filepath.Join(t.TempDir(), "mounts")
	src, mnt := t.TempDir(), filepath.Join(root, "deadbeef", "0")
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	ec, mc := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- export.Serve(ctx, ec, src, export.Options{}) }()
	fs, err := fuse.Mount(context.Background(), mc, mnt, fuse.Options{})
	if err != nil {
		// Mount closed its end, so the export has ended or is ending.
		select {
		case serr := <-served:
			t.Fatalf("mount: %v (the export ended with: %v)", err, serr)
		case <-time.After(10 * time.Second):
			t.Fatalf("mount: %v (the export is still serving)", err)
		}
	}
	t.Cleanup(func() { _ = fs.Unmount() })
	if err := sweepMounts(root); err != nil {
		t.Fatal(err)
	}
	if m, _ := mount.Mounted(root); len(m) != 0 {
		t.Fatalf("still mounted after the sweep: %v", m)
	}
	if es, _ := os.ReadDir(root); len(es) != 0 {
		t.Errorf("mountpoints left: %v", es)
	}
	done := make(chan struct{})
	go func() { fs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the swept mount's FUSE loop is still running")
	}
}

// Security round 2, item 6: the client serves a single-file mount and
// may replace the file with a symlink to a server path after up; a
// restart must not bind that server file into the container (the bind
// is of the file the server checked, pinned, never of a path).
func TestSingleFileMountFollowsNoLink(t *testing.T) {
	ts := newTestServer(t)
	if refusesLocalMounts(t, ts) {
		return
	}
	fx := deployLocal(t, ts)
	// An editor's save by rename (a new regular file) is followed: the
	// container's next start binds the edited file.
	tmp := fx.file + ".swp"
	write(t, tmp, "edited\n")
	if err := os.Rename(tmp, fx.file); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// As a client restarts: through the server, which pins the
		// edited file again before the container binds it. Until the
		// server's mount sees the rename (its name cache lasts a second)
		// the old file is pinned, and it is gone: the start fails.
		out := ""
		err := fx.projects.Restart(context.Background(), fx.project, engine.LifecycleOptions{})
		if err == nil {
			out, _ = fx.sh(t, "cat /etc/single.conf 2>&1; true")
			if out == "edited\n" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after an edit by rename a restarted container reads %q (%v)", out, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	serverSecret := filepath.Join(t.TempDir(), "root-only")
	write(t, serverSecret, "server-secret\n")
	if err := os.Remove(fx.file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(serverSecret, fx.file); err != nil {
		t.Fatal(err)
	}
	// Restarts through the engine (as a restart policy would) and through
	// the server (which pins again first): none may bind the link.
	for _, restart := range []func() error{
		func() error { return ts.srv.e.Restart(context.Background(), fx.project, engine.LifecycleOptions{}) },
		func() error { return fx.projects.Restart(context.Background(), fx.project, engine.LifecycleOptions{}) },
	} {
		if err := restart(); err != nil {
			t.Logf("restart refused (the pinned file is gone on the client): %v", err)
			continue
		}
		out, _ := fx.sh(t, "cat /etc/single.conf 2>&1; true")
		if strings.Contains(out, "server-secret") {
			t.Fatalf("the container read the server's file through the client's symlink: %q", out)
		}
		t.Logf("after the swap the container reads: %q", out)
	}
}
