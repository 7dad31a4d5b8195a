package outbound

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/spec"
)

// Environment of the helper process (TestOwnerHelper) the owner tests
// start in a cgroup and a network namespace of theirs.
const (
	envHelper = "CORNUS_OUTBOUND_HELPER" // dial, exempt or owner
	envAddr   = "CORNUS_OUTBOUND_ADDR"
	envMark   = "CORNUS_OUTBOUND_MARK"
)

// TestOwnerHelper is not a test: it is the process the owner tests run
// elsewhere (another cgroup, their namespace). It prints one line.
func TestOwnerHelper(t *testing.T) {
	switch os.Getenv(envHelper) {
	case "":
		t.Skip("the owner tests' helper process")
	case "owner":
		o, err := SelfOwner()
		fmt.Printf("owner %d %d %v\n", o.Cgroup, o.Level, err)
	case "exempt":
		ok, err := Exempt()
		fmt.Printf("exempt %v %v\n", ok, err)
	case "install":
		// The caretaker's own steps, as redirect (run.go) takes them.
		o, err := SelfOwner()
		if err == nil {
			err = Redirect(uint16(must(strconv.Atoi(os.Getenv(envAddr)))), &o)
		}
		ok, eerr := Exempt()
		fmt.Printf("install %d %d exempt %v %v\n", o.Cgroup, o.Level, ok, errors.Join(err, eerr))
	case "dial":
		d := &net.Dialer{Timeout: 3 * time.Second}
		if os.Getenv(envMark) == "1" {
			d = MarkedDialer()
		}
		c, err := d.Dial("tcp", os.Getenv(envAddr))
		if err != nil {
			fmt.Printf("dial: %v\n", err)
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(c)
		fmt.Printf("read %q\n", b)
	}
}

// cgroup2Mount is where this host mounts the unified hierarchy
// (/sys/fs/cgroup on cgroup v2, /sys/fs/cgroup/unified on a hybrid v1).
func cgroup2Mount(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if f := strings.Fields(pre); ok && len(f) > 4 && strings.HasPrefix(post, "cgroup2 ") {
			return f[4]
		}
	}
	t.Skip("no cgroup2 file system mounted: the owner's cgroup match needs the unified hierarchy")
	return ""
}

// testCgroup makes a cgroup below parent, removed at the end (after the
// helpers in it exited), and returns its path and an open directory fd
// for clone3 (SysProcAttr.CgroupFD).
func testCgroup(t *testing.T, parent, name string) (string, int) {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return dir, fd
}

// helper runs TestOwnerHelper in cgroup fd and network namespace n.
func helper(t *testing.T, n netns, cgroupFD int, env ...string) string {
	t.Helper()
	return helperIn(t, n, cgroupFD, nil, env...)
}

// helperIn is helper with a command before it (unshare -C).
func helperIn(t *testing.T, n netns, cgroupFD int, pre []string, env ...string) string {
	t.Helper()
	args := append(append([]string{"netns", "exec", string(n)}, pre...), os.Args[0], "-test.run=^TestOwnerHelper$", "-test.count=1")
	cmd := exec.Command("ip", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: cgroupFD}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper %v: %v\n%s", env, err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "owner ") || strings.HasPrefix(l, "exempt ") || strings.HasPrefix(l, "install ") || strings.HasPrefix(l, "dial") || strings.HasPrefix(l, "read ") {
			return l
		}
	}
	t.Fatalf("helper %v printed nothing of its own:\n%s", env, out)
	return ""
}

// TestRedirectOwner is the SO_MARK attack on the redirect's own half:
// a process of the namespace that may mark its sockets (here it may: it
// runs as root) marks them as the caretaker's; made in another cgroup,
// they are redirected all the same. The caretaker's cgroup is read back
// as SelfOwner reads it, and its marked sockets pass, its unmarked ones
// do not.
func TestRedirectOwner(t *testing.T) {
	sfx := make([]byte, 3)
	_, _ = rand.Read(sfx)
	id := hex.EncodeToString(sfx)
	app, far := newNetns(t, "cornus-ow-a-"+id), newNetns(t, "cornus-ow-f-"+id)
	run(t, "ip", "link", "add", "cwb"+id, "netns", string(app), "type", "veth", "peer", "name", "cwf"+id, "netns", string(far))
	run(t, "ip", "-n", string(app), "addr", "add", "10.231.8.1/30", "dev", "cwb"+id)
	run(t, "ip", "-n", string(far), "addr", "add", "10.231.8.2/30", "dev", "cwf"+id)
	run(t, "ip", "-n", string(app), "link", "set", "cwb"+id, "up")
	run(t, "ip", "-n", string(far), "link", "set", "cwf"+id, "up")

	root := cgroup2Mount(t)
	base, _ := testCgroup(t, root, "cornus-ow-"+id)
	ctDir, ctFD := testCgroup(t, base, "caretaker")
	_, appFD := testCgroup(t, base, "app")

	// What the caretaker in ctDir reads as its owner.
	var st unix.Stat_t
	if err := unix.Stat(ctDir, &st); err != nil {
		t.Fatal(err)
	}
	level := uint32(strings.Count(strings.TrimPrefix(ctDir, root), "/"))
	want := fmt.Sprintf("owner %d %d <nil>", st.Ino, level)
	if got := helper(t, app, ctFD, envHelper+"=owner"); got != want {
		t.Fatalf("SelfOwner in %s: %q, want %q", ctDir, got, want)
	}
	owner := &Owner{Cgroup: st.Ino, Level: level}

	var srv net.Listener
	if err := far.in(t, func() (err error) { srv, err = net.Listen("tcp", "10.231.8.2:8080"); return }); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "far answered")
			c.Close()
		}
	}()
	var ln net.Listener
	if err := app.in(t, func() (err error) {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		return Redirect(uint16(ln.Addr().(*net.TCPAddr).Port), owner)
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The policy denies the far server: only what the redirect skips
	// reaches it.
	router := &Router{Service: "app", Policy: policy(t, spec.Egress{Mode: spec.EgressTransparent, Default: egress.Deny})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = (&Transparent{Router: router, Proxy: &Proxy{}}).Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	dial := envAddr + "=10.231.8.2:8080"
	for _, tc := range []struct {
		who  string
		fd   int
		mark bool
		want string
	}{
		{"the caretaker, marked", ctFD, true, `read "far answered"`},
		{"the app, marked as the caretaker (the attack)", appFD, true, `read ""`},
		{"the caretaker, unmarked", ctFD, false, `read ""`},
		{"the app, unmarked", appFD, false, `read ""`},
	} {
		mark := envMark + "=0"
		if tc.mark {
			mark = envMark + "=1"
		}
		if got := helper(t, app, tc.fd, envHelper+"=dial", dial, mark); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.who, got, tc.want)
		}
	}
	// Exempt's probe, on a fresh table (its counter at 0): true in the
	// owner's cgroup, false in another.
	for _, tc := range []struct {
		who  string
		fd   int
		want string
	}{{"the owner's cgroup", ctFD, "exempt true <nil>"}, {"another cgroup", appFD, "exempt false <nil>"}} {
		if err := app.in(t, func() error { return Redirect(uint16(ln.Addr().(*net.TCPAddr).Port), owner) }); err != nil {
			t.Fatal(err)
		}
		if got := helper(t, app, tc.fd, envHelper+"=exempt"); got != tc.want {
			t.Errorf("Exempt in %s: %s, want %s", tc.who, got, tc.want)
		}
	}
	// A caretaker in a cgroup namespace of its own (cgroup v2 hosts give
	// containers one) sees its cgroup as the root: level 0, which
	// nftables counts from that namespace's root since Linux 6.11.
	// Before, its probe fails and it keeps to the mark (redirect, run.go);
	// either way the app's forged mark is redirected.
	port := envAddr + "=" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	got := helperIn(t, app, ctFD, []string{"unshare", "--cgroup"}, envHelper+"=install", port)
	if !strings.HasPrefix(got, fmt.Sprintf("install %d 0 exempt ", st.Ino)) || !strings.HasSuffix(got, " <nil>") {
		t.Fatalf("the caretaker's steps in a cgroup namespace: %s", got)
	}
	if !strings.Contains(got, "exempt true") {
		var u unix.Utsname
		_ = unix.Uname(&u)
		t.Logf("Linux %s counts the cgroup's level from the hierarchy's root: a caretaker in a cgroup namespace keeps to its mark", unix.ByteSliceToString(u.Release[:]))
	}
	if got := helper(t, app, appFD, envHelper+"=dial", dial, envMark+"=1"); got != `read ""` {
		t.Errorf("the app, marked as the caretaker, after a caretaker in a cgroup namespace installed the redirect: %s", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
