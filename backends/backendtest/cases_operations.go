package backendtest

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// operationCases: refusals, concurrency, images, names, network modes,
// security options, terminals, hooks and rollouts.
var operationCases = []testCase{
	{
		name:   "privileged containers are refused by default, nothing created",
		fields: []string{"privileged"},
		sample: func(x *env) spec.App { return spec.App{Name: "app", Privileged: true} },
		run: func(x *env) {
			a := sleeper("app")
			a.Privileged = true
			_, err := x.e.Up(x.ctx, x.proj(a), engine.UpOptions{})
			if !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), "CORNUS_ALLOW_PRIVILEGED") {
				x.t.Fatalf("up error = %v", err)
			}
			if len(x.containers("app")) != 0 {
				x.t.Fatal("a container was created")
			}
		},
	},
	{
		name:   "concurrent applies create one network",
		fields: []string{"networks"},
		run: func(x *env) {
			p := x.proj(sleeper("app"))
			errs := make(chan error, 3)
			for range 3 {
				go func() {
					_, err := x.e.Up(x.ctx, p, engine.UpOptions{})
					errs <- err
				}()
			}
			for range 3 {
				if err := <-errs; err != nil {
					x.t.Fatal(err)
				}
			}
			ns, err := x.networks().ListNetworks(x.ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: x.project}})
			if err != nil || len(ns) != 1 || len(x.containers("app")) != 1 {
				x.t.Fatalf("networks %d, containers %d, err %v", len(ns), len(x.containers("app")), err)
			}
		},
	},
	{
		name:   "images: inspect, list, missing is NotFound",
		fields: []string{"image"},
		run: func(x *env) {
			img, err := x.images().InspectImage(x.ctx, Image)
			if err != nil || img.ID == "" {
				x.t.Fatalf("inspect %s: %v", Image, err)
			}
			imgs, err := x.images().ListImages(x.ctx)
			if err != nil {
				x.t.Fatal(err)
			}
			found := false
			for _, i := range imgs {
				found = found || (i.ID == img.ID && (slices.Contains(i.Tags, Image) || slices.Contains(i.Tags, "docker.io/"+Image)))
			}
			if !found {
				x.t.Fatalf("ListImages misses the loaded image %s (%s) under its tag", Image, img.ID)
			}
			if _, err := x.images().InspectImage(x.ctx, "cornus-test/absent:"+x.project); !errdefs.IsNotFound(err) {
				x.t.Fatalf("missing image: want NotFound, got %v", err)
			}
			// An image the runtime lacks under pull_policy never is a clear
			// error, and nothing is created.
			a := sleeper("app")
			a.Image, a.PullPolicy = "cornus-test/absent:"+x.project, "never"
			if _, err := x.e.Up(x.ctx, x.proj(a), engine.UpOptions{}); err == nil || !strings.Contains(err.Error(), "cornus image load") {
				x.t.Fatalf("up with a missing image: %v", err)
			}
		},
	},
	{
		name:   "fixed container name",
		fields: []string{"containerName"},
		run: func(x *env) {
			a := sleeper("app")
			a.ContainerName = x.project + "-fixed"
			x.up(x.proj(a))
			if c := x.one("app"); c.Name != x.project+"-fixed" {
				x.t.Fatalf("name = %q", c.Name)
			}
		},
	},
	{
		name: "network mode none and bridge with DNS servers",
		parts: []part{
			{field: "networkMode=none", set: func(x *env, d *draft) { d.app("isolated").NetworkMode = "none" },
				check: func(x *env, _ spec.Project) {
					if out := x.mustSh("isolated", "ls /sys/class/net"); out != "lo" {
						x.t.Fatalf("network mode none has interfaces: %s", out)
					}
				}},
			{field: "networkMode=bridge", set: func(x *env, d *draft) { d.app("bridged").NetworkMode = "bridge" },
				check: func(x *env, _ spec.Project) {
					if out := x.mustSh("bridged", "ls /sys/class/net"); !strings.Contains(out, "lo") || out == "lo" {
						x.t.Fatalf("network mode bridge: interfaces %q, want one besides lo", out)
					}
				}},
			// A service's network namespace: side reaches what api serves
			// on its loopback only, which no other container can.
			{field: "networkMode=service", set: func(x *env, d *draft) {
				d.app("api").Command = spec.Command{"sh", "-c", "mkdir -p /www && echo shared > /www/index.html && exec httpd -f -p 127.0.0.1:8080 -h /www"}
				d.app("side").NetworkMode = "service:api"
			}, check: func(x *env, _ spec.Project) {
				x.eventuallyServes("side", "127.0.0.1:8080", "shared") // api's loopback
			}},
			// A lookup reaches the server dns names, whether the runtime
			// writes it to resolv.conf or forwards to it from a resolver of
			// its own (dockerd on a user network): the server is a UDP sink
			// of the test's, whose address replaces the placeholder once
			// known.
			{field: "dns", set: func(x *env, d *draft) {
				d.app("dnssink").Command = spec.Command{"sh", "-c", "exec udpsink 53 /tmp/queries"}
				d.app("resolver").DNS = []string{"10.9.9.9"}
			}, check: func(x *env, p spec.Project) {
				ip := x.address("dnssink")
				p = spec.DeepCopy(p)
				r := p.Services["resolver"]
				r.DNS = []string{ip}
				p.Services["resolver"] = r
				x.up(p)
				x.eventually("a lookup reaches the dns server "+ip, func() string {
					x.sh("resolver", "timeout 3 nslookup contract-probe.test >/dev/null 2>&1")
					if out, code := x.sh("dnssink", "grep -c contract-probe /tmp/queries"); code != 0 {
						rc, _ := x.sh("resolver", "cat /etc/resolv.conf")
						return errf("no query arrived (%s); the resolver's resolv.conf:\n%s", out, rc)
					}
					return ""
				})
			}},
		},
	},
	{
		// Docker's default confinement is part of the contract: a container
		// that asks for nothing runs under the runtime's seccomp filter
		// (mode 2), as one naming the default profile does.
		name:   "security options that keep confinement",
		fields: []string{"securityOpt"},
		sample: func(x *env) spec.App {
			return spec.App{Name: "app", SecurityOpt: []string{"no-new-privileges:true", "seccomp=builtin"}}
		},
		run: func(x *env) {
			a := sleeper("app")
			a.SecurityOpt = []string{"no-new-privileges:true", "seccomp=builtin"}
			x.up(x.proj(a, sleeper("plain")))
			if out := x.mustSh("app", "grep NoNewPrivs /proc/self/status"); !strings.HasSuffix(out, "1") {
				x.t.Fatalf("no-new-privileges: %s", out)
			}
			for _, app := range []string{"app", "plain"} {
				if out := x.mustSh(app, "grep Seccomp: /proc/self/status"); !strings.HasSuffix(out, "2") {
					x.t.Fatalf("%s: not under a seccomp filter by default: %s", app, out)
				}
			}
		},
	},
	{
		name: "tty and open stdin",
		parts: []part{
			{field: "tty", set: func(x *env, d *draft) {
				a := d.app("app")
				a.TTY, a.Command = true, spec.Command{"sh", "-c", "test -t 1 && echo tty > /tmp/t; trap 'exit 0' TERM; while true; do sleep 0.2; done"}
			}, check: func(x *env, _ spec.Project) {
				x.eventually("main process on a tty", func() string {
					if out, _ := x.sh("app", "cat /tmp/t"); out != "tty" {
						return "no tty: " + out
					}
					return ""
				})
			}},
			// Without stdinOpen the app's stdin is empty and cat ends at
			// once; with it, stdin stays open and cat waits for input.
			{field: "stdinOpen", set: func(x *env, d *draft) {
				open, closed := d.app("open"), d.app("closed")
				open.StdinOpen = true
				open.Command, closed.Command = spec.Command{"sh", "-c", stdinReader}, spec.Command{"sh", "-c", stdinReader}
			}, check: func(x *env, _ spec.Project) {
				x.eventually("stdin of an app without stdinOpen ends", func() string {
					if out, _ := x.sh("closed", "cat /tmp/eof"); out != "eof" {
						return "no eof yet"
					}
					return ""
				})
				if out, code := x.sh("open", "cat /tmp/eof"); code == 0 {
					x.t.Fatalf("stdinOpen: the app's stdin ended (%s)", out)
				}
			}},
		},
	},
	{
		name:   "postCreate, postStart and postAttach hooks run in order",
		fields: []string{"hooks"},
		run: func(x *env) {
			a := sleeper("app")
			a.Hooks = &spec.Hooks{
				PostCreate: []spec.Hook{{Command: []string{"sh", "-c", "echo created >> /tmp/events"}}},
				PostStart:  []spec.Hook{{Command: []string{"sh", "-c", "echo started:$PHASE >> /tmp/events"}, Env: map[string]string{"PHASE": "one"}}},
				PostAttach: []spec.Hook{{Command: []string{"sh", "-c", "echo attached >> /tmp/events"}}},
			}
			x.up(x.proj(a))
			// The devcontainer order: postCreate, postStart, postAttach.
			if out := x.mustSh("app", "cat /tmp/events"); out != "created\nstarted:one\nattached" {
				x.t.Fatalf("hook events = %q", out)
			}
			a.Hooks.PostStart[0].Command = []string{"false"}
			a.Env = map[string]string{"CHANGED": "1"}
			if _, err := x.e.Up(x.ctx, x.proj(a), engine.UpOptions{}); err == nil || !strings.Contains(err.Error(), "postStart") {
				x.t.Fatalf("a failing hook did not fail up: %v", err)
			}
		},
	},
	{
		name:   "a changed app rolls out as update says",
		fields: []string{"update"},
		sample: func(x *env) spec.App {
			a := sleeper("app")
			a.Update = &spec.UpdateConfig{Parallelism: 1, Order: spec.UpdateStartFirst}
			return a
		},
		run: func(x *env) {
			// Three replicas, two at a time, new ones first; a replica is
			// healthy (ready) 3 s after it starts. Each stamps its start and
			// its stop (the host-wide clock) in a file of the test's: from
			// the first new start on never fewer than three alive (no old
			// one stops before its replacement is up), the first two new
			// ones start together and the third only once they are ready.
			// Kubernetes' default for three (one surge, none unavailable)
			// starts one at a time.
			a := spec.App{Name: "app", Command: spec.Command{"sh", "-c", `stamp() { echo "$1 $V $(hostname) $(cut -d' ' -f1 /proc/uptime)" >> /stamps/log; }; ` +
				`stamp start; trap 'stamp stop; exit 0' TERM; sleep 3; touch /tmp/ready; while true; do sleep 0.2; done`}}
			a.Healthcheck = &spec.Healthcheck{Test: []string{"CMD", "test", "-f", "/tmp/ready"}, Interval: spec.DurationOf(200 * time.Millisecond), Retries: ptr(100)}
			a.Mounts = []spec.Mount{{Source: x.dir, Target: "/stamps"}}
			a.Replicas = ptr(3)
			a.Update = &spec.UpdateConfig{Parallelism: 2, Order: spec.UpdateStartFirst}
			a.Env = map[string]string{"V": "1"}
			x.up(x.proj(a))
			a.Env = map[string]string{"V": "2"}
			x.up(x.proj(a))
			var events []rolloutEvent
			x.eventually("the three old replicas stamp their stop", func() string {
				var err error
				if events, err = readRollout(x.dir + "/log"); err != nil {
					return err.Error()
				}
				if n := countEvents(events, "stop", "1"); n != 3 {
					return errf("%d old replicas stopped", n)
				}
				return ""
			})
			if msg := checkRollout(events, 3, 2, 3); msg != "" {
				x.t.Fatalf("rollout of 3 replicas, 2 at a time, start-first: %s\nstamps:\n%v", msg, events)
			}
			cs := x.containers("app")
			if len(cs) != 3 {
				x.t.Fatalf("after the rollout: %d replicas, want 3", len(cs))
			}
			for _, c := range cs {
				var out bytes.Buffer
				code, err := x.b.Exec(x.ctx, c.ID, backends.ExecOptions{Cmd: []string{"sh", "-c", "echo $V"}, Stdout: &out})
				if err != nil || code != 0 || strings.TrimSpace(out.String()) != "2" {
					x.t.Fatalf("%s after the rollout: V=%q (exit %d, %v)", c.Name, out.String(), code, err)
				}
			}
		},
	},
}
