package backendtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/testnet"
	"github.com/cornus-dev/cornus/spec"
)

// testCase is one contract: either one behaviour (run) of the spec
// fields it exercises, where a declared gap on one of them turns the case
// into a warning check on sample (so every field but one is on the
// floor), or parts, one per field, where a gap drops only its own part
// (parts.go).
type testCase struct {
	name   string
	fields []string
	sample func(x *env) spec.App
	run    func(x *env)
	parts  []part
}

// allFields are the fields the case exercises.
func (c testCase) allFields() []string {
	out := slices.Clone(c.fields)
	for _, p := range c.parts {
		out = append(out, p.field)
	}
	return out
}

// cases are the contract, in the order they run (compat.go adds its own).
var cases = slices.Concat(coreCases, processCases, operationCases)

var coreCases = []testCase{
	{
		name:   "lifecycle and labels",
		fields: []string{"image", "command", "labels"},
		run: func(x *env) {
			a := sleeper("app")
			a.Labels = map[string]string{"org.example.team": "core"}
			x.up(x.proj(a))
			c := x.one("app")
			if !c.Running() || c.Labels["org.example.team"] != "core" || c.Replica() != "1" || c.Labels[backends.LabelConfigHash] == "" {
				x.t.Fatalf("container after up: state %s labels %v", c.State, c.Labels)
			}
			if err := x.b.Stop(x.ctx, c.ID, backends.StopOptions{}); err != nil {
				x.t.Fatal(err)
			}
			if c = x.one("app"); c.Running() || c.State != backends.StateExited {
				x.t.Fatalf("after stop: %s", c.State)
			}
			if err := x.b.Start(x.ctx, c.ID); err != nil {
				x.t.Fatal(err)
			}
			d, err := x.b.Inspect(x.ctx, c.ID)
			if err != nil {
				x.t.Fatal(err)
			}
			if !d.Running() || d.Created.IsZero() || d.StartedAt.Before(d.Created) || d.Name != c.Name {
				x.t.Fatalf("inspect: running %v created %v started %v name %q", d.Running(), d.Created, d.StartedAt, d.Name)
			}
			if _, err := x.b.Inspect(x.ctx, "no-such-container-"+x.project); !errdefs.IsNotFound(err) {
				x.t.Fatalf("inspect of a missing container: want NotFound, got %v", err)
			}
		},
	},
	{
		// The main process records its own view at start; exec, which runs
		// with the container's configuration, must see the same.
		name: "process configuration",
		parts: []part{
			{field: "entrypoint", set: func(x *env, d *draft) { viewer(d) }, check: func(x *env, _ spec.Project) {
				x.eventually("the entrypoint runs the command", func() string {
					if out, code := x.sh("app", "cat /tmp/main.done"); code != 0 || out != "done" {
						return errf("the main process wrote no view: %s", out)
					}
					return ""
				})
			}},
			{field: "env", set: func(x *env, d *draft) { viewer(d).Env = map[string]string{"GREETING": "hello world"} },
				check: func(x *env, _ spec.Project) { x.checkView("env", `echo "$GREETING"`, "hello world") }},
			{field: "workingDir", set: func(x *env, d *draft) { viewer(d).WorkingDir = "/tmp" },
				check: func(x *env, _ spec.Project) { x.checkView("pwd", "pwd", "/tmp") }},
			{field: "user", set: func(x *env, d *draft) { viewer(d).User = "1000" },
				check: func(x *env, _ spec.Project) { x.checkView("uid", "id -u", "1000") }},
			{field: "hostname", set: func(x *env, d *draft) { viewer(d).Hostname = "contract-host" },
				check: func(x *env, _ spec.Project) { x.checkView("hostname", "hostname", "contract-host") }},
			{field: "domainname", set: func(x *env, d *draft) { viewer(d).Domainname = "example.test" },
				check: func(x *env, _ spec.Project) {
					x.checkView("domainname", "cat /proc/sys/kernel/domainname", "example.test")
				}},
			{field: "groupAdd", set: func(x *env, d *draft) { viewer(d).GroupAdd = []string{"65534"} },
				check: func(x *env, _ spec.Project) {
					groups := strings.Fields(x.checkView("groups", "id -G", ""))
					if !slices.Contains(groups, "65534") {
						x.t.Fatalf("groupAdd 65534: the main process is in groups %v", groups)
					}
				}},
		},
	},
	{
		name:   "replicas scale up and down",
		fields: []string{"replicas"},
		run: func(x *env) {
			a := sleeper("app")
			three := 3
			a.Replicas = &three
			x.up(x.proj(a))
			if n := len(x.containers("app")); n != 3 {
				x.t.Fatalf("%d replicas, want 3", n)
			}
			one := 1
			a.Replicas = &one
			x.up(x.proj(a))
			cs := x.containers("app")
			if len(cs) != 1 || cs[0].Replica() != "1" {
				x.t.Fatalf("after scale down: %d containers", len(cs))
			}
		},
	},
	{
		name:   "re-apply is idempotent, a change recreates",
		fields: []string{"env"},
		run: func(x *env) {
			a := sleeper("app")
			a.Env = map[string]string{"V": "1"}
			x.up(x.proj(a))
			first := x.one("app").ID
			x.up(x.proj(a))
			if id := x.one("app").ID; id != first {
				x.t.Fatal("unchanged re-apply recreated the container")
			}
			a.Env["V"] = "2"
			x.up(x.proj(a))
			if c := x.one("app"); c.ID == first || !c.Running() {
				x.t.Fatal("changed env did not recreate the container")
			}
			if v := x.mustSh("app", "echo $V"); v != "2" {
				x.t.Fatalf("V = %q", v)
			}
		},
	},
	{
		name:   "published tcp port answers on 127.0.0.1",
		fields: []string{"ports"},
		sample: func(x *env) spec.App {
			return spec.App{Name: "web", Ports: []spec.Port{{Container: 8080, HostIP: "127.0.0.1"}}}
		},
		run: func(x *env) {
			port := testnet.FreePort(x.t)
			web := spec.App{Name: "web",
				Command: spec.Command{"sh", "-c", "udpsink 9000 /tmp/udp & mkdir -p /www && echo contract-ok > /www/index.html && exec httpd -f -p 8080 -h /www"},
				Init:    ptr(true),
				Ports:   []spec.Port{{HostIP: "127.0.0.1", Host: port, Container: 8080}, {HostIP: "127.0.0.1", Container: 9000, Protocol: "udp"}},
			}
			x.up(x.proj(web))
			x.eventually("http on the published port", func() string {
				body, err := testnet.HTTPGet(fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					return err.Error()
				}
				if !strings.Contains(body, "contract-ok") {
					return "body " + body
				}
				return ""
			})
			var tcp bool
			udpPort := 0
			for _, p := range x.one("web").Ports {
				tcp = tcp || (p.ContainerPort == 8080 && p.HostPort == port && p.Protocol == "tcp")
				if p.ContainerPort == 9000 && p.Protocol == "udp" {
					udpPort = p.HostPort
				}
			}
			if !tcp || udpPort == 0 {
				x.t.Fatalf("ports reported: %+v", x.one("web").Ports)
			}
			// A datagram sent to the published UDP port reaches the app.
			x.eventually("a datagram through the published udp port", func() string {
				if err := testnet.SendUDP(fmt.Sprintf("127.0.0.1:%d", udpPort), "contract-datagram\n"); err != nil {
					return err.Error()
				}
				time.Sleep(100 * time.Millisecond)
				if out, _ := x.sh("web", "cat /tmp/udp"); !strings.Contains(out, "contract-datagram") {
					return "not received: " + out
				}
				return ""
			})
		},
	},
	{
		name:   "services reach each other by name and alias on a network",
		fields: []string{"networks"},
		run: func(x *env) {
			server := spec.App{Name: "server", Init: ptr(true),
				Command:  spec.Command{"sh", "-c", "mkdir -p /www && echo from-server > /www/index.html && exec httpd -f -p 8080 -h /www"},
				Networks: []spec.NetworkAttachment{{Name: "back", Aliases: []string{"api"}}},
			}
			client := sleeper("client")
			client.Networks = []spec.NetworkAttachment{{Name: "back"}}
			p := x.proj(server, client)
			p.Networks = map[string]spec.Network{"back": {Name: x.project + "_back"}}
			x.up(p)
			for _, host := range []string{"server", "api"} {
				x.eventuallyServes("client", host+":8080", "from-server")
			}
		},
	},
	{
		name: "named volume survives recreation, anonymous and tmpfs mounts",
		parts: []part{
			{field: "volumes", set: func(x *env, d *draft) {
				d.app("app").Volumes = []spec.VolumeMount{{Source: "data", Target: "/data"}, {Target: "/scratch"}, {Source: "data", Target: "/ro", ReadOnly: true}}
				d.volumes["data"] = spec.Volume{}
			}, check: func(x *env, p spec.Project) {
				x.mustSh("app", "echo kept > /data/f && echo x > /scratch/f")
				if out := x.mustSh("app", "cat /ro/f"); out != "kept" {
					x.t.Fatalf("the read-only mount of the named volume reads %q", out)
				}
				if _, code := x.sh("app", "echo no > /ro/g"); code == 0 {
					x.t.Fatal("read-only volume mount is writable")
				}
				x.up(p, engine.UpOptions{ForceRecreate: true})
				if out := x.mustSh("app", "cat /data/f"); out != "kept" {
					x.t.Fatalf("named volume content after recreate = %q", out)
				}
			}},
			{field: "tmpfs", set: func(x *env, d *draft) { d.app("app").Tmpfs = []spec.Tmpfs{{Target: "/fast", Size: 4 << 20}} },
				check: func(x *env, _ spec.Project) {
					if out := x.mustSh("app", "grep ' /fast ' /proc/mounts"); !strings.Contains(out, "tmpfs") {
						x.t.Fatalf("/fast is not a tmpfs: %s", out)
					}
				}},
		},
	},
	{
		name:   "bind mount of an allowed host directory",
		fields: []string{"mounts"},
		sample: func(x *env) spec.App {
			return spec.App{Name: "app", Mounts: []spec.Mount{{Source: x.dir, Target: "/host"}}}
		},
		run: func(x *env) {
			x.writeFile("hello.txt", "from-host\n")
			a := sleeper("app")
			a.Mounts = []spec.Mount{{Source: x.dir, Target: "/host", ReadOnly: true}}
			x.up(x.proj(a))
			if out := x.mustSh("app", "cat /host/hello.txt"); out != "from-host" {
				x.t.Fatalf("bind content = %q", out)
			}
			if _, code := x.sh("app", "touch /host/new"); code == 0 {
				x.t.Fatal("read-only bind is writable")
			}
		},
	},
	{
		name: "secrets and configs from file, environment and content",
		parts: []part{
			{field: "secrets", set: func(x *env, d *draft) {
				val, mode := "env-secret", spec.FileMode(0o400)
				d.app("app").Secrets = append(d.app("app").Secrets,
					spec.FileMount{Name: "pw", File: x.writeFile("pw.txt", "file-secret"), Target: "/run/secrets/pw"},
					spec.FileMount{Name: "token", Environment: "TOKEN", Value: &val, Target: "/run/secrets/token", Mode: &mode})
			}, check: func(x *env, _ spec.Project) {
				if got := x.mustSh("app", "cat /run/secrets/pw; echo; cat /run/secrets/token; echo; stat -c '%a %u' /run/secrets/token"); got != "file-secret\nenv-secret\n400 0" {
					x.t.Fatalf("secrets:\n%s\nwant file-secret, env-secret, mode 400 owned by root", got)
				}
			}},
			{field: "secrets.uid", set: func(x *env, d *draft) {
				d.app("app").Secrets = append(d.app("app").Secrets, spec.FileMount{Name: "uid", Content: "u", Target: "/run/secrets/uid", UID: "1000"})
			}, check: func(x *env, _ spec.Project) { x.checkOwner("/run/secrets/uid", "%u") }},
			{field: "secrets.gid", set: func(x *env, d *draft) {
				d.app("app").Secrets = append(d.app("app").Secrets, spec.FileMount{Name: "gid", Content: "g", Target: "/run/secrets/gid", GID: "1000"})
			}, check: func(x *env, _ spec.Project) { x.checkOwner("/run/secrets/gid", "%g") }},
			{field: "configs", set: func(x *env, d *draft) {
				d.app("app").Configs = append(d.app("app").Configs, spec.FileMount{Name: "conf", Content: "key=value\n", Target: "/etc/app/conf.ini"})
			}, check: func(x *env, _ spec.Project) {
				if got := x.mustSh("app", "cat /etc/app/conf.ini; stat -c '%a %u' /etc/app/conf.ini"); got != "key=value\n444 0" {
					x.t.Fatalf("config:\n%s\nwant its content, mode 444 owned by root", got)
				}
			}},
			{field: "configs.uid", set: func(x *env, d *draft) {
				d.app("app").Configs = append(d.app("app").Configs, spec.FileMount{Name: "uid", Content: "u", Target: "/etc/app/uid", UID: "1000"})
			}, check: func(x *env, _ spec.Project) { x.checkOwner("/etc/app/uid", "%u") }},
			{field: "configs.gid", set: func(x *env, d *draft) {
				d.app("app").Configs = append(d.app("app").Configs, spec.FileMount{Name: "gid", Content: "g", Target: "/etc/app/gid", GID: "1000"})
			}, check: func(x *env, _ spec.Project) { x.checkOwner("/etc/app/gid", "%g") }},
		},
	},
	{
		name:   "healthcheck gates a service_healthy dependent",
		fields: []string{"healthcheck", "dependsOn"},
		sample: func(x *env) spec.App {
			return spec.App{Name: "db", Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "true"}}}
		},
		run: func(x *env) {
			// /proc/uptime is one clock for every container on the host:
			// the first passing probe records when db became healthy, the
			// app records when it started.
			db := sleeper("db")
			db.Command = spec.Command{"sh", "-c", "trap 'exit 0' TERM; sleep 1; touch /tmp/ready; while true; do sleep 0.2; done"}
			db.Healthcheck = &spec.Healthcheck{Test: []string{"CMD-SHELL", "test -f /tmp/ready && { test -f /tmp/healthy-at || " + uptime + " > /tmp/healthy-at; }"},
				Interval: spec.DurationOf(200 * time.Millisecond), Retries: ptr(50)}
			app := stamped("app")
			app.DependsOn = map[string]spec.Dependency{"db": {Condition: spec.ConditionHealthy}}
			x.up(x.proj(db, app), engine.UpOptions{Wait: true})
			if !x.one("app").Running() {
				x.t.Fatal("dependent not running")
			}
			healthy, started := x.clock("db", "/tmp/healthy-at"), x.clock("app", "/tmp/started-at")
			if started < healthy {
				x.t.Fatalf("app started at %.2f, before db became healthy at %.2f", started, healthy)
			}
		},
	},
	{
		name:   "an unhealthy dependency fails up, naming it",
		fields: []string{"healthcheck", "dependsOn"},
		sample: func(x *env) spec.App {
			return spec.App{Name: "db", Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "false"}}}
		},
		run: func(x *env) {
			db := sleeper("db")
			db.Healthcheck = &spec.Healthcheck{Test: []string{"CMD", "false"}, Interval: spec.DurationOf(200 * time.Millisecond), Retries: ptr(2)}
			app := sleeper("app")
			app.DependsOn = map[string]spec.Dependency{"db": {Condition: spec.ConditionHealthy}}
			_, err := x.e.Up(x.ctx, x.proj(db, app), engine.UpOptions{})
			if err == nil || !strings.Contains(err.Error(), "dependency db is unhealthy") {
				x.t.Fatalf("up error = %v", err)
			}
			if len(x.containers("app")) != 0 {
				x.t.Fatal("dependent was created despite the unhealthy dependency")
			}
		},
	},
	{
		name:   "service_completed_successfully: exit 0 lets dependents start, exit 1 fails with logs",
		fields: []string{"dependsOn", "volumes"},
		run: func(x *env) {
			// The job's last act is a file on a shared volume; the app copies
			// it when it starts: present only if the job finished first.
			job := spec.App{Name: "migrate", Command: spec.Command{"sh", "-c", "echo migrating; sleep 1; echo done > /shared/done; exit 0"},
				Volumes: []spec.VolumeMount{{Source: "shared", Target: "/shared"}}}
			app := sleeper("app")
			app.Command = spec.Command{"sh", "-c", "cat /shared/done > /tmp/saw 2>&1; trap 'exit 0' TERM; while true; do sleep 0.2; done"}
			app.Volumes = job.Volumes
			app.DependsOn = map[string]spec.Dependency{"migrate": {Condition: spec.ConditionCompleted}}
			p := x.proj(job, app)
			p.Volumes = map[string]spec.Volume{"shared": {Name: x.project + "_shared"}}
			x.up(p)
			if !x.one("app").Running() {
				x.t.Fatal("app not started after the job completed")
			}
			if saw := x.mustSh("app", "cat /tmp/saw"); saw != "done" {
				x.t.Fatalf("app started before the job completed: it saw %q", saw)
			}
			job.Volumes, app.Volumes = nil, nil
			bad := spec.App{Name: "migrate", Command: spec.Command{"sh", "-c", "echo schema broken >&2; exit 3"}}
			_, err := x.e.Up(x.ctx, x.proj(bad, app), engine.UpOptions{})
			if err == nil || !strings.Contains(err.Error(), "migrate") || !strings.Contains(err.Error(), "exited with code 3") || !strings.Contains(err.Error(), "schema broken") {
				x.t.Fatalf("up error = %v", err)
			}
		},
	},
}

func ptr[T any](v T) *T { return &v }

// uptime prints the host-wide clock every container shares.
const uptime = "cut -d' ' -f1 /proc/uptime"

// stamped is a sleeper that records when it started in /tmp/started-at.
func stamped(name string) spec.App {
	a := sleeper(name)
	a.Command = spec.Command{"sh", "-c", uptime + " > /tmp/started-at; trap 'exit 0' TERM; while true; do sleep 0.2; done"}
	return a
}

// clock reads a /proc/uptime stamp a container wrote.
func (x *env) clock(app, file string) float64 {
	x.t.Helper()
	v, err := strconv.ParseFloat(x.mustSh(app, "cat "+file), 64)
	if err != nil {
		x.t.Fatalf("%s in %s: %v", file, app, err)
	}
	return v
}

// viewScript has the main process record its view of its configuration
// in /tmp/main.<what> (main.done last), then sleep.
const viewScript = `echo "$GREETING" > /tmp/main.env; pwd > /tmp/main.pwd; id -u > /tmp/main.uid; id -G > /tmp/main.groups; ` +
	`hostname > /tmp/main.hostname; cat /proc/sys/kernel/domainname > /tmp/main.domainname; echo done > /tmp/main.done; ` +
	`trap 'exit 0' TERM; while true; do sleep 0.2; done`

// viewer is the draft's app "app" running viewScript through an
// entrypoint.
func viewer(d *draft) *spec.App {
	a := d.app("app")
	a.Entrypoint, a.Command = spec.Command{"sh", "-c"}, spec.Command{viewScript}
	return a
}

// checkView compares what the main process recorded as what with an exec
// of script: both must be want ("" takes the main process's view as it
// is, and exec must agree). It returns the view.
func (x *env) checkView(what, script, want string) string {
	x.t.Helper()
	var main string
	x.eventually("the main process's view", func() string {
		out, code := x.sh("app", "cat /tmp/main.done && cat /tmp/main."+what)
		if code != 0 {
			return errf("not written yet: %s", out)
		}
		main = strings.TrimPrefix(out, "done\n")
		return ""
	})
	if want == "" {
		want = main
	}
	if main != want {
		x.t.Fatalf("%s: the main process sees %q, want %q", what, main, want)
	}
	if out := x.mustSh("app", script); out != want {
		x.t.Fatalf("%s: exec sees %q, want %q (the main process sees it)", what, out, want)
	}
	return main
}
