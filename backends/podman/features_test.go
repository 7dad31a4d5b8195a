package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down docker cp over the libpod archive endpoints: a tar in keeps
// its owners, a tar out holds the file, stat describes it, a missing path
// is NotFound (issue 9: archive get/put).
func TestCopy(t *testing.T) {
	b, ctx := setup(t)
	c := started(t, b, unique("cp"), spec.App{Name: "app", Command: sleeper})
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	body := "copied-in\n"
	_ = tw.WriteHeader(&tar.Header{Name: "dir/f.txt", Mode: 0o640, Size: int64(len(body)), Uid: 1000, Gid: 1000, Typeflag: tar.TypeReg, ModTime: time.Now()})
	_, _ = tw.Write([]byte(body))
	_ = tw.Close()
	if err := b.CopyTo(ctx, c.ID, "/tmp", &in); err != nil {
		t.Fatal(err)
	}
	if _, out := execOut(t, b, c.ID, "stat", "-c", "%u %a", "/tmp/dir/f.txt"); strings.TrimSpace(out) != "1000 640" {
		t.Fatalf("owner and mode after copy in: %q", out)
	}
	st, err := b.StatPath(ctx, c.ID, "/tmp/dir/f.txt")
	if err != nil || st.Name != "f.txt" || st.Size != int64(len(body)) {
		t.Fatalf("stat: %+v %v", st, err)
	}
	rc, st, err := b.CopyFrom(ctx, c.ID, "/tmp/dir")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if st.Name != "dir" || st.Mode&uint32(1<<31) == 0 { // os.ModeDir
		t.Fatalf("stat of a directory: %+v", st)
	}
	tr := tar.NewReader(rc)
	found := ""
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Name == "dir/f.txt" {
			data, _ := io.ReadAll(tr)
			found = string(data)
		}
	}
	if found != body {
		t.Fatalf("tar out holds %q", found)
	}
	if _, err := b.StatPath(ctx, c.ID, "/no/such/path"); !errdefs.IsNotFound(err) {
		t.Fatalf("stat of a missing path: want NotFound, got %v", err)
	}
}

// Locks down logs: tail, timestamps, since, and follow ending when the
// container stops (issue 9: logs follow/since/tail/timestamps).
func TestLogs(t *testing.T) {
	b, ctx := setup(t)
	c := started(t, b, unique("logs"), spec.App{Name: "app", Command: sh("for i in 1 2 3 4 5; do echo line$i; done; echo oops >&2; sleep 2")})
	var out, errOut bytes.Buffer
	eventually(t, 10*time.Second, "all lines", func() bool {
		out.Reset()
		_ = b.Logs(ctx, c.ID, backends.LogOptions{Tail: -1, Stdout: &out, Stderr: &errOut})
		return strings.Count(out.String(), "line") == 5
	})
	out.Reset()
	if err := b.Logs(ctx, c.ID, backends.LogOptions{Tail: 2, Stdout: &out, Stderr: io.Discard}); err != nil || out.String() != "line4\nline5\n" && out.String() != "line5\n" {
		t.Fatalf("tail 2 (stdout of the last 2 lines): %q %v", out.String(), err)
	}
	out.Reset()
	if err := b.Logs(ctx, c.ID, backends.LogOptions{Tail: -1, Timestamps: true, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out.String(), " ")
	if _, err := time.Parse(time.RFC3339Nano, first); err != nil {
		t.Fatalf("timestamps: first word %q of %q", first, out.String())
	}
	out.Reset()
	if err := b.Logs(ctx, c.ID, backends.LogOptions{Tail: -1, Since: time.Now().Add(time.Hour), Stdout: &out, Stderr: &out}); err != nil || out.Len() != 0 {
		t.Fatalf("since the future: %q %v", out.String(), err)
	}
	begin := time.Now()
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out.Reset()
	if err := b.Logs(fctx, c.ID, backends.LogOptions{Follow: true, Tail: -1, Stdout: &out, Stderr: io.Discard}); err != nil || fctx.Err() != nil {
		t.Fatalf("follow: %v (ctx %v)", err, fctx.Err())
	}
	if !strings.Contains(out.String(), "line5") {
		t.Fatalf("follow output %q", out.String())
	}
	t.Logf("follow ended %v after the call, with the container", time.Since(begin))
}

// Locks down exec with a TTY: the initial size reaches the process, the
// exit code comes back (issue 9: exec TTY, resize, exit code). podman
// sizes an exec's terminal just after starting it (its own CLI's exec -t
// too): on a loaded host the first stty can see 0 0 ("stty: standard
// input"), so the process waits, within 10 s, for the size to arrive.
func TestExecTTY(t *testing.T) {
	b, ctx := setup(t)
	c := started(t, b, unique("tty"), spec.App{Name: "app", Command: sleeper})
	var out bytes.Buffer
	script := `i=0; until s=$(stty size 2>/dev/null) && [ "$s" != "0 0" ] || [ $i -ge 100 ]; do i=$((i+1)); sleep 0.1; done; echo "$s"; exit 7`
	code, err := b.Exec(ctx, c.ID, backends.ExecOptions{Cmd: []string{"sh", "-c", script}, TTY: true, Size: &backends.TermSize{Height: 33, Width: 101}, Stdout: &out})
	if err != nil || code != 7 || !strings.Contains(out.String(), "33 101") {
		t.Fatalf("exec tty: code %d err %v out %q", code, err, out.String())
	}
	if _, err := b.Exec(ctx, "no-such-container", backends.ExecOptions{Cmd: []string{"true"}}); !errdefs.IsNotFound(err) {
		t.Fatalf("exec in a missing container: want NotFound, got %v", err)
	}
}

// Locks down the optional verbs podman offers: events with labels and
// exit codes, kill, pause, top, stats, rename, restart, attach output.
func TestEventsAndVerbs(t *testing.T) {
	b, ctx := setup(t)
	project := unique("ev")
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	subscribed := make(chan struct{})
	events, errs := b.Events(evCtx, backends.EventOptions{Labels: map[string]string{backends.LabelProject: project}, Subscribed: func() { close(subscribed) }})
	select {
	case <-subscribed:
	case err := <-errs:
		t.Fatalf("events: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("events: no subscription")
	}
	c := started(t, b, project, spec.App{Name: "app", Command: sh("echo hello; trap 'exit 42' USR1; trap 'exit 0' TERM; echo trapped; while true; do sleep 0.1; done")})

	var attached bytes.Buffer
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	_ = b.Attach(actx, c.ID, backends.AttachOptions{Logs: true, Stream: false, Stdout: &attached, Stderr: &attached})
	acancel()
	if !strings.Contains(attached.String(), "hello") {
		t.Logf("attach logs replay: %q (podman may not replay logs on attach)", attached.String())
	}
	top, err := b.Top(ctx, c.ID, "")
	if err != nil || len(top.Titles) < 2 || len(top.Processes) == 0 {
		t.Fatalf("top: %+v %v", top, err)
	}
	if top, err := b.Top(ctx, c.ID, "-ef"); err != nil || len(top.Titles) < 2 || len(top.Processes) == 0 || len(top.Processes[0]) != len(top.Titles) {
		t.Fatalf("top -ef: %+v %v", top, err)
	}
	st, err := b.Stats(ctx, c.ID)
	if rootless, _ := b.Rootless(ctx); rootless && errdefs.IsNotImplemented(err) {
		t.Logf("stats: %v", err) // cgroup v1: podman has none rootless
	} else if err != nil || st.MemoryUsage == 0 || st.Pids == 0 || st.CPUTotal == 0 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	paused := true
	if err := b.Pause(ctx, c.ID); errdefs.IsNotImplemented(err) {
		t.Logf("pause: %v", err) // a rootless service on cgroup v1
		paused = false
	} else if err != nil {
		t.Fatal(err)
	}
	if paused {
		if d, _ := b.Inspect(ctx, c.ID); d.State != backends.StatePaused || !d.Running() {
			t.Fatalf("paused: %s", d.State)
		}
		if err := b.Unpause(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	newName := c.Name + "-renamed"
	if err := b.Rename(ctx, c.ID, newName); err != nil {
		t.Fatal(err)
	}
	if err := b.Restart(ctx, c.ID, backends.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	// The shell is PID 1, which ignores a signal it has no handler for
	// yet: USR1 waits until the restarted run says its traps are set.
	eventually(t, 30*time.Second, "the restarted container's traps", func() bool {
		var out bytes.Buffer
		_ = b.Logs(ctx, c.ID, backends.LogOptions{Tail: -1, Stdout: &out, Stderr: io.Discard})
		return strings.Count(out.String(), "trapped") >= 2
	})
	if err := b.Kill(ctx, c.ID, spec.Signal(syscall.SIGUSR1)); err != nil {
		t.Fatal(err)
	}
	if code, err := b.Wait(ctx, c.ID); err != nil || code != 42 {
		t.Fatalf("wait after kill USR1: %d %v", code, err)
	}
	if err := b.Kill(ctx, c.ID, spec.SIGKILL); !errdefs.IsConflict(err) {
		t.Fatalf("kill of a stopped container: want Conflict, got %v", err)
	}
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"create", "start", "pause", "unpause", "die", "start", "die", "destroy"}
	if !paused {
		want = slices.DeleteFunc(want, func(a string) bool { return strings.Contains(a, "pause") })
	}
	var got []string
	var dieCode *int
	deadline := time.After(15 * time.Second)
	for len(got) < 64 && !contains(got, "destroy") {
		select {
		case e := <-events:
			if e.ID != c.ID {
				continue
			}
			got = append(got, e.Action)
			if e.Action == "die" {
				dieCode = e.ExitCode
			}
		case err := <-errs:
			t.Fatalf("events: %v", err)
		case <-deadline:
			t.Fatalf("events so far %v, want %v in order", got, want)
		}
	}
	if !inOrder(got, want) || dieCode == nil || *dieCode != 42 {
		t.Fatalf("events %v (last exit code %v), want %v in order", got, dieCode, want)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// inOrder reports whether want is a subsequence of got.
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// Locks down network attach after start: connect with an alias that a
// peer resolves, disconnect, and the events a cache follows.
func TestConnect(t *testing.T) {
	b, ctx := setup(t)
	project := unique("net")
	n, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "back"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.RemoveNetwork(context.Background(), n.ID) })
	again, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "back"})
	if err != nil || again.ID != n.ID {
		t.Fatalf("ensure twice: %+v %v", again, err)
	}
	if _, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project + "x", Key: "back", Network: spec.Network{Name: n.Name}}); !errdefs.IsConflict(err) {
		t.Fatalf("a network of that name from another project: want Conflict, got %v", err)
	}
	peer := spec.App{Name: "peer", Command: sleeper, Networks: []spec.NetworkAttachment{{Name: "back"}}}
	p := started(t, b, project, peer, func(in *backends.ResolveInput) {
		in.Networks = map[string]spec.Network{"back": {Name: n.Name}}
	})
	c := started(t, b, project, spec.App{Name: "late", Command: sleeper, NetworkMode: "bridge"})
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The connect happens once the stream is confirmed: a live stream
	// set up after it would miss it.
	subscribed := make(chan struct{})
	events, _ := b.Events(evCtx, backends.EventOptions{Networks: true, Labels: map[string]string{backends.LabelProject: project},
		Subscribed: func() { close(subscribed) }})
	select {
	case <-subscribed:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream was not confirmed")
	}
	if err := b.Connect(ctx, n.Name, c.ID, []string{"late-alias"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the alias resolves on the network", func() bool {
		code, _ := execOut(t, b, p.ID, "nslookup", "late-alias")
		return code == 0
	})
	if err := b.Disconnect(ctx, n.Name, c.ID, false); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !seen["connect"] || !seen["disconnect"] {
		select {
		case e := <-events:
			if e.ID == c.ID {
				seen[e.Action] = true
			}
		case <-deadline:
			t.Fatalf("network events seen: %v", seen)
		}
	}
}

// Locks down what podman 4 cannot say itself and the backend prepares:
// a volume subpath (a bind of the volume's directory), an anonymous
// volume with driver options (a volume made for the container and
// removed with it), and the first free port of a host port range.
func TestPreparedMounts(t *testing.T) {
	b, ctx := setup(t)
	project := unique("prep")
	vol := unique("vol")
	t.Cleanup(func() { _ = b.RemoveVolume(context.Background(), vol, true) })
	seed := started(t, b, project, spec.App{Name: "seed", Command: sleeper, Volumes: []spec.VolumeMount{{Source: vol, Target: "/v"}}})
	execOut(t, b, seed.ID, "sh", "-c", "mkdir -p /v/sub && echo in-sub > /v/sub/f")

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	first := busy.Addr().(*net.TCPAddr).Port
	app := spec.App{Name: "app", Command: sleeper,
		Volumes: []spec.VolumeMount{{Source: vol, Target: "/only-sub", Subpath: "sub", ReadOnly: true},
			{Target: "/scratch", DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs"}}},
		Ports: []spec.Port{{HostIP: "127.0.0.1", Host: first, HostEnd: first + 20, Container: 80}},
	}
	c := started(t, b, project, app)
	if _, out := execOut(t, b, c.ID, "cat", "/only-sub/f"); strings.TrimSpace(out) != "in-sub" {
		t.Fatalf("subpath: %q", out)
	}
	if _, out := execOut(t, b, c.ID, "sh", "-c", "grep ' /scratch ' /proc/mounts"); !strings.Contains(out, "tmpfs") {
		t.Fatalf("anonymous volume with driver options: %q", out)
	}
	d, err := b.Inspect(ctx, c.ID)
	if err != nil || len(d.Ports) != 1 || d.Ports[0].HostPort == first || d.Ports[0].HostPort > first+20 {
		t.Fatalf("port from a range whose first port is busy: %+v %v", d.Ports, err)
	}
	anon := strings.Split(d.Labels[labelAnonymousVolumes], ",")
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true, Volumes: true}); err != nil {
		t.Fatal(err)
	}
	for _, v := range anon {
		if _, err := b.inspectVolume(ctx, v); !errdefs.IsNotFound(err) {
			t.Fatalf("volume %s made for the container outlived it: %v", v, err)
		}
	}
}

// Locks down the endpoint rules: an unreachable socket is no startup
// error, calls then fail Unavailable naming it (issue 9).
func TestUnreachableEndpoint(t *testing.T) {
	sock := t.TempDir() + "/absent.sock"
	b, err := New(context.Background(), WithEnviron([]string{EnvSocket + "=" + sock}))
	if err != nil {
		t.Fatalf("New with an unreachable socket: %v", err)
	}
	defer b.Close()
	_, err = b.List(context.Background(), backends.ListOptions{})
	if !errdefs.IsUnavailable(err) || !strings.Contains(err.Error(), "podman at unix://"+sock+" unreachable") {
		t.Fatalf("list: want Unavailable naming the endpoint, got %v", err)
	}
	if caps := b.Capabilities(); !caps.NativeHealthcheck || !caps.Has(backends.FeatureCopy) {
		t.Fatalf("capabilities without the daemon's facts: %+v", caps)
	}
}

// Locks down CORNUS_PODMAN_SERVICE=1: cornus starts podman on a private
// socket, restarts it when it dies, stops it on Close (issue 9).
func TestServiceMode(t *testing.T) {
	base := newTestBackend(t) // skips without podman
	_ = base
	env := []string{EnvService + "=1", "CORNUS_STATE_DIR=" + t.TempDir(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"CONTAINERS_CONF=/etc/cornus/podman/containers.conf"}
	ctx := testContext(t)
	b, err := New(ctx, WithEnviron(env))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if rootless, err := b.Rootless(ctx); err != nil || rootless {
		t.Fatalf("rootless: %v %v (this test runs as root)", rootless, err)
	}
	b.svc.mu.Lock()
	first := b.svc.cmd.Process
	b.svc.mu.Unlock()
	begin := time.Now()
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the service restarted", func() bool {
		b.svc.mu.Lock()
		p := b.svc.cmd.Process
		b.svc.mu.Unlock()
		return p.Pid != first.Pid && b.Ping(ctx) == nil
	})
	t.Logf("service answered again %v after it was killed", time.Since(begin).Round(time.Millisecond))
	b.svc.mu.Lock()
	exited := b.svc.exited
	b.svc.mu.Unlock()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("service still running after Close")
	}
	if err := b.Ping(ctx); !errdefs.IsUnavailable(err) {
		t.Fatalf("after Close: %v", err)
	}
}

// Locks down name conflicts: a second container of a taken name is a
// Conflict that names it.
func TestNameConflict(t *testing.T) {
	b, ctx := setup(t)
	c := createApp(t, b, unique("dup"), spec.App{Name: "app", Command: sleeper})
	cs, err := backends.Resolve(backends.ResolveInput{Project: "x", App: spec.App{Name: "app", Image: testRef, Command: sleeper}, Replica: 1, Name: c.Name})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Create(ctx, cs)
	if !errdefs.IsConflict(err) || !strings.Contains(err.Error(), c.Name) {
		t.Fatalf("create with a taken name: want Conflict naming it, got %v", err)
	}
}

// Locks down rootless awareness: the answer is podman's own (GET
// /libpod/info), and reaching containers from the host is refused on a
// rootless service, naming remote mode, which goes through companions
// instead (issue 9; issue 30: the variable used to lift the refusal and
// leave the dial to an unroutable address).
func TestRootless(t *testing.T) {
	b, ctx := setup(t)
	var info hostInfo
	if err := b.cli.call(ctx, request{method: "GET", path: "/info"}, &info); err != nil {
		t.Fatal(err)
	}
	rootless, err := b.Rootless(ctx)
	if err != nil || rootless != info.Host.Security.Rootless {
		t.Fatalf("Rootless() = %v, %v; podman says %v", rootless, err, info.Host.Security.Rootless)
	}
	for _, remote := range []bool{false, true} {
		b.cfg.remote = remote
		err = b.CheckHostReach(ctx, "port-forward")
		if rootless != (err != nil) || (err != nil && (!errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), EnvRemote+"=1"))) {
			t.Fatalf("rootless %v, remote mode %v: CheckHostReach = %v", rootless, remote, err)
		}
		if on, v := b.RemoteMode(); on != remote || v != EnvRemote {
			t.Errorf("RemoteMode() = %v, %q with %s %v", on, v, EnvRemote, remote)
		}
	}
	if !b.Capabilities().Has(backends.FeatureRemoteMode) {
		t.Error("podman does not offer remote mode")
	}
	t.Logf("rootless: %v", rootless)
}
