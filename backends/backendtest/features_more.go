package backendtest

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// The behaviour of each optional feature, observed from the outside: what
// the feature claims shows in the container, its files or its peers.
func init() {
	featureCases = append(featureCases,
		featureCase{feature: backends.FeatureStats, name: "stats show the memory a process holds", run: statsCase},
		featureCase{feature: backends.FeatureConnect, name: "a connected container reaches a peer on the new network by name", run: connectCase},
		featureCase{feature: backends.FeaturePause, name: "a paused container makes no progress until unpaused", run: pauseCase},
		featureCase{feature: backends.FeatureKill, name: "kill delivers the named signal", run: killCase},
		featureCase{feature: backends.FeatureRestart, name: "restart starts the process again", run: restartCase},
		featureCase{feature: backends.FeatureRename, name: "a renamed container answers to its new name", run: renameCase},
		featureCase{feature: backends.FeatureTop, name: "top lists a process the test started", run: topCase},
		featureCase{feature: backends.FeatureEvents, name: "events report the start and death of the test's container", run: eventsCase},
		featureCase{feature: backends.FeatureAttach, name: "attach sees output and delivers stdin", run: attachCase},
	)
}

// counter counts in /count/n, ten times a second.
var counter = spec.Command{"sh", "-c", "i=0; trap 'exit 0' TERM; while true; do i=$((i+1)); echo $i > /count/n; sleep 0.1; done"}

func statsCase(x *env) {
	x.up(x.proj(sleeper("app")))
	id := x.one("app").ID
	st, _ := backends.Want[backends.StatsSource](x.b, backends.FeatureStats, "stats")
	const held = 32 << 20
	before, err := st.Stats(x.ctx, id)
	if err != nil {
		x.t.Fatal(err)
	}
	if before.MemoryUsage >= held {
		x.t.Fatalf("an idle sleeper already uses %d bytes: the sample cannot show 32 MiB more", before.MemoryUsage)
	}
	// A shell holding 32 MiB in a variable, started by the test.
	x.mustSh("app", `sh -c 'x=$(head -c 33554432 /dev/zero | tr "\0" a); echo held > /tmp/held; while true; do sleep 1; done' >/dev/null 2>&1 &`)
	x.eventually("the process holds its memory", func() string {
		if out, _ := x.sh("app", "cat /tmp/held"); out != "held" {
			return "not yet"
		}
		return ""
	})
	x.eventually("stats show 32 MiB more", func() string {
		s, err := st.Stats(x.ctx, id)
		if err != nil {
			return err.Error()
		}
		if s.MemoryUsage < held || s.Pids < 2 {
			return errf("memory usage %d bytes (before: %d), pids %d", s.MemoryUsage, before.MemoryUsage, s.Pids)
		}
		return ""
	})
}

func connectCase(x *env) {
	peer := spec.App{Name: "peer", Init: ptr(true),
		Command:  spec.Command{"sh", "-c", "mkdir -p /www && echo from-peer > /www/index.html && exec httpd -f -p 8080 -h /www"},
		Networks: []spec.NetworkAttachment{{Name: "back"}}}
	client := unkept(sleeper("client"))
	client.Networks = []spec.NetworkAttachment{{Name: "front"}}
	p := x.proj(peer, client)
	p.Networks = map[string]spec.Network{"front": {Name: x.project + "_front"}, "back": {Name: x.project + "_back"}}
	x.up(p)
	reach := httpGet("peer:8080")
	if out, code := x.sh("client", reach); code == 0 && strings.Contains(out, "from-peer") {
		x.t.Fatalf("the client reaches the peer before it is connected to its network: %s", out)
	}
	cn, _ := backends.Want[backends.NetworkConnector](x.b, backends.FeatureConnect, "connect")
	back := x.networkID("back")
	if err := cn.Connect(x.ctx, back, x.one("client").ID, nil); err != nil {
		x.t.Fatalf("connect: %v", err)
	}
	x.eventuallyServes("client", "peer:8080", "from-peer") // once connected
	if err := cn.Disconnect(x.ctx, back, x.one("client").ID, false); err != nil {
		x.t.Fatalf("disconnect: %v", err)
	}
	x.eventually("the disconnected client no longer reaches peer", func() string {
		if out, code := x.sh("client", reach); code == 0 && strings.Contains(out, "from-peer") {
			return "still reached: " + out
		}
		return ""
	})
}

// networkID is the runtime's id of the project network key.
func (x *env) networkID(key string) string {
	x.t.Helper()
	ns, err := x.networks().ListNetworks(x.ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: x.project}})
	if err != nil {
		x.t.Fatal(err)
	}
	for _, n := range ns {
		if n.Name == x.project+"_"+key || n.Labels[backends.ComposeNetwork] == key {
			return n.ID
		}
	}
	x.t.Fatalf("no network %s among %+v", key, ns)
	return ""
}

func pauseCase(x *env) {
	// The counter writes to a volume a reader shares: a paused container
	// takes no exec.
	count := spec.App{Name: "count", Command: counter, Volumes: []spec.VolumeMount{{Source: "count", Target: "/count"}}}
	reader := sleeper("reader")
	reader.Volumes = count.Volumes
	p := x.proj(count, reader)
	p.Volumes = map[string]spec.Volume{"count": {Name: x.project + "_count"}}
	x.up(p)
	read := func() int {
		out := x.mustSh("reader", "cat /count/n 2>/dev/null || echo 0")
		n, _ := strconv.Atoi(out)
		return n
	}
	x.eventually("the counter counts", func() string {
		if read() < 3 {
			return "not counting"
		}
		return ""
	})
	pz, _ := backends.Want[backends.Pauser](x.b, backends.FeaturePause, "pause")
	id := x.one("count").ID
	if err := pz.Pause(x.ctx, id); err != nil {
		x.t.Fatalf("pause: %v", err)
	}
	if c := x.one("count"); c.State != backends.StatePaused {
		x.t.Fatalf("after pause the container is %s", c.State)
	}
	frozen := read()
	// Ten ticks' time: a running counter would have moved.
	time.Sleep(time.Second)
	if n := read(); n != frozen {
		x.t.Fatalf("paused, the counter went from %d to %d", frozen, n)
	}
	if err := pz.Unpause(x.ctx, id); err != nil {
		x.t.Fatalf("unpause: %v", err)
	}
	x.eventually("the unpaused counter counts again", func() string {
		if n := read(); n <= frozen {
			return errf("still at %d", n)
		}
		return ""
	})
}

func killCase(x *env) {
	a := spec.App{Name: "app", Command: spec.Command{"sh", "-c", "for s in USR1 HUP TERM; do trap \"echo $s >> /tmp/signals\" $s; done; " +
		"touch /tmp/trapped; while true; do sleep 0.1; done"}}
	x.up(x.proj(a))
	x.waitTrapped("app")
	k, _ := backends.Want[backends.Signaler](x.b, backends.FeatureKill, "kill")
	id := x.one("app").ID
	// TERM too, which a stop would send.
	for _, sig := range []spec.Signal{spec.Signal(syscall.SIGUSR1), spec.Signal(syscall.SIGHUP), spec.SIGTERM} {
		if err := k.Kill(x.ctx, id, sig); err != nil {
			x.t.Fatalf("kill %s: %v", sig, err)
		}
		want := strings.TrimPrefix(sig.String(), "SIG")
		x.eventually(sig.String()+" trapped", func() string {
			if out, _ := x.sh("app", "cat /tmp/signals"); !slices.Contains(strings.Fields(out), want) {
				return "signals seen: " + out
			}
			return ""
		})
	}
	if c := x.one("app"); !c.Running() {
		x.t.Fatalf("after trapped signals the app is %s", c.State)
	}
}

func restartCase(x *env) {
	a := spec.App{Name: "app", Command: spec.Command{"sh", "-c", uptime + " >> /tmp/starts; trap 'exit 0' TERM; while true; do sleep 0.2; done"}}
	x.up(x.proj(a))
	before := x.inspect("app")
	first := x.lastClock("app", "/tmp/starts")
	r, _ := backends.Want[backends.Restarter](x.b, backends.FeatureRestart, "restart")
	if err := r.Restart(x.ctx, before.ID, backends.StopOptions{}); err != nil {
		x.t.Fatalf("restart: %v", err)
	}
	// A later StartedAt, or the same one where the runtime counts whole
	// seconds (kubernetes) and the restart came in the second of the
	// start; either way the main process stamped a later start.
	x.eventually("the process started again", func() string {
		d := x.inspect("app")
		later := d.StartedAt.After(before.StartedAt) ||
			(d.StartedAt.Equal(before.StartedAt) && d.StartedAt.Equal(d.StartedAt.Truncate(time.Second)))
		if !d.Running() || !later {
			return errf("running %v, started at %v (before: %v)", d.Running(), d.StartedAt, before.StartedAt)
		}
		out, code := x.sh("app", "tail -1 /tmp/starts")
		again, err := strconv.ParseFloat(out, 64)
		if code != 0 || err != nil {
			return "no start recorded: " + out
		}
		if again <= first {
			return errf("the main process last started at %.2f, not after its first start at %.2f", again, first)
		}
		return ""
	})
}

// lastClock is the last /proc/uptime stamp in a container's file.
func (x *env) lastClock(app, file string) float64 {
	x.t.Helper()
	var v float64
	x.eventually("a stamp in "+file, func() string {
		out, code := x.sh(app, "tail -1 "+file)
		f, err := strconv.ParseFloat(out, 64)
		if code != 0 || err != nil {
			return errf("%s: %q", file, out)
		}
		v = f
		return ""
	})
	return v
}

func renameCase(x *env) {
	x.up(x.proj(unkept(sleeper("app"))))
	c := x.one("app")
	rn, _ := backends.Want[backends.Renamer](x.b, backends.FeatureRename, "rename")
	name := x.project + "-renamed"
	if err := rn.Rename(x.ctx, c.ID, name); err != nil {
		x.t.Fatalf("rename: %v", err)
	}
	d, err := x.b.Inspect(x.ctx, name)
	if err != nil || d.ID != c.ID || d.Name != name {
		x.t.Fatalf("inspect by the new name %s: id %s name %q, %v (want id %s)", name, d.ID, d.Name, err, c.ID)
	}
	if got := x.one("app").Name; got != name {
		x.t.Fatalf("list shows %q, want %q", got, name)
	}
	if _, err := x.b.Inspect(x.ctx, c.Name); !errdefs.IsNotFound(err) {
		x.t.Fatalf("inspect by the old name %s: want NotFound, got %v", c.Name, err)
	}
	var out bytes.Buffer
	if code, err := x.b.Exec(x.ctx, name, backends.ExecOptions{Cmd: []string{"echo", "by-name"}, Stdout: &out}); err != nil || code != 0 || strings.TrimSpace(out.String()) != "by-name" {
		x.t.Fatalf("exec by the new name: exit %d, %v, %q", code, err, out.String())
	}
}

func topCase(x *env) {
	x.up(x.proj(sleeper("app")))
	x.mustSh("app", "sleep 4242 >/dev/null 2>&1 &")
	tp, _ := backends.Want[backends.ProcessLister](x.b, backends.FeatureTop, "top")
	x.eventually("top lists sleep 4242", func() string {
		ps, err := tp.Top(x.ctx, x.one("app").ID, "")
		if err != nil {
			return err.Error()
		}
		for _, row := range ps.Processes {
			if strings.Contains(strings.Join(row, " "), "sleep 4242") {
				return ""
			}
		}
		return errf("titles %v, rows %v", ps.Titles, ps.Processes)
	})
}

func eventsCase(x *env) {
	ev, _ := backends.Want[backends.EventSource](x.b, backends.FeatureEvents, "events")
	ctx, cancel := context.WithCancel(x.ctx)
	defer cancel()
	var mu sync.Mutex
	var seen []backends.Event
	events, errs := ev.Events(ctx, backends.EventOptions{Since: time.Now().Add(-time.Second), Labels: map[string]string{backends.ComposeProject: x.project}})
	go func() {
		for e := range events {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		}
	}()
	// Stopped before its trap is set, PID 1 would ignore TERM and die by
	// SIGKILL (137): wait for the trap.
	a := spec.App{Name: "app", Command: spec.Command{"sh", "-c", "trap 'exit 3' TERM; touch /tmp/trapped; while true; do sleep 0.1; done"}}
	x.up(x.proj(a))
	x.waitTrapped("app")
	c := x.one("app")
	if err := x.b.Stop(x.ctx, c.ID, backends.StopOptions{}); err != nil {
		x.t.Fatal(err)
	}
	x.eventually("start and die of "+c.Name, func() string {
		select {
		case err := <-errs:
			return errf("the event stream failed: %v", err)
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		var start, die bool
		for _, e := range seen {
			if e.ID != c.ID {
				continue
			}
			start = start || e.Action == "start"
			die = die || (e.Action == "die" && e.ExitCode != nil && *e.ExitCode == 3)
		}
		if !start || !die {
			var got []string
			for _, e := range seen {
				code := "-"
				if e.ExitCode != nil {
					code = strconv.Itoa(*e.ExitCode)
				}
				got = append(got, e.Action+" "+e.Name+" "+code)
			}
			return errf("start %v, die with exit 3 %v; events: %v", start, die, got)
		}
		return ""
	})
}

func attachCase(x *env) {
	a := spec.App{Name: "app", StdinOpen: true, Command: spec.Command{"sh", "-c", "trap 'exit 0' TERM; while read l; do echo \"got:$l\"; done"}}
	x.up(x.proj(a))
	at, _ := backends.Want[backends.Attacher](x.b, backends.FeatureAttach, "attach")
	ctx, cancel := context.WithCancel(x.ctx)
	defer cancel()
	in, typed := io.Pipe()
	var out LockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- at.Attach(ctx, x.one("app").ID, backends.AttachOptions{Stdin: in, Stdout: &out, Stderr: &out, Stream: true})
	}()
	// The pipe hands the line over only once the attachment reads stdin.
	go func() { _, _ = io.WriteString(typed, "typed-in\n") }()
	x.eventually("the app echoes the attached line", func() string {
		if s := out.String(); !strings.Contains(s, "got:typed-in") {
			return errf("attached output %q", s)
		}
		return ""
	})
	cancel()
	_ = typed.Close()
	select {
	case <-done: //nolint:errcheck // nil or the cancellation: only the end matters
	case <-time.After(30 * time.Second):
		x.t.Fatal("attach did not end when its context was cancelled")
	}
}

// LockedBuffer is a bytes.Buffer safe for one writer and one reader (a
// process's output read while it runs).
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// unkept is the app with restart "no": a container no controller keeps as its
// template says (a Kubernetes Deployment's replica refuses rename and
// connect, which its template would undo).
func unkept(a spec.App) spec.App {
	a.Restart = "no"
	return a
}
