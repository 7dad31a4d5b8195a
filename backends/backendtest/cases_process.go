package backendtest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// processCases: how the main process is stopped, restarted, confined,
// resourced, logged and exec'd into.
var processCases = []testCase{
	{
		// Each app marks /tmp/trapped once its trap is set: a signal sent
		// before that (a loaded machine) would meet PID 1 with no handler,
		// which ignores it.
		name: "stop signal and grace period",
		parts: []part{
			{field: "stopSignal", set: func(x *env, d *draft) {
				a := d.app("graceful")
				a.StopSignal = "SIGUSR1"
				a.Command = spec.Command{"sh", "-c", "trap 'exit 42' USR1; touch /tmp/trapped; while true; do sleep 0.1; done"}
			}, check: func(x *env, _ spec.Project) {
				x.waitTrapped("graceful")
				if err := x.b.Stop(x.ctx, x.one("graceful").ID, backends.StopOptions{}); err != nil {
					x.t.Fatal(err)
				}
				if c := x.one("graceful"); c.ExitCode != 42 {
					x.t.Fatalf("graceful exit code %d (%s): the stop signal was not delivered", c.ExitCode, c.State)
				}
			}},
			{field: "stopGracePeriod", set: func(x *env, d *draft) {
				a := d.app("stubborn")
				a.StopGracePeriod = spec.DurationOf(2 * time.Second)
				a.Command = spec.Command{"sh", "-c", "trap '' TERM; touch /tmp/trapped; while true; do sleep 0.1; done"}
			}, check: func(x *env, _ spec.Project) {
				// The stubborn app ignores SIGTERM: it is killed at its own
				// grace (2 s), not at a runtime default (Docker's is 10 s).
				x.waitTrapped("stubborn")
				begin := time.Now()
				if err := x.b.Stop(x.ctx, x.one("stubborn").ID, backends.StopOptions{}); err != nil {
					x.t.Fatal(err)
				}
				took := time.Since(begin)
				if c := x.one("stubborn"); c.ExitCode != 137 {
					x.t.Fatalf("stubborn exit code %d (%s): want 137 (killed after the grace period)", c.ExitCode, c.State)
				}
				// Below 10 s, no runtime default (10 s, Kubernetes' 30 s) was
				// waited for, however slow the kill after the grace is (30
				// cases stopping at once on a cluster took 7 s and more).
				if took < 2*time.Second-100*time.Millisecond || took >= 10*time.Second {
					x.t.Fatalf("stop of a SIGTERM-ignoring app took %v: want its 2 s grace, not a runtime default (10 s or more)", took)
				}
			}},
		},
	},
	{
		name: "restart policy restarts a failing container",
		parts: []part{
			{field: "restart", set: func(x *env, d *draft) {
				// on-failure restarts a crash (a new start, later than the
				// first) and leaves a clean exit alone.
				crasher := d.app("crasher")
				crasher.Restart, crasher.Command = "on-failure", spec.Command{"sh", "-c", "sleep 1; exit 1"}
				finisher := d.app("finisher")
				finisher.Restart, finisher.Command = "on-failure", spec.Command{"sh", "-c", "sleep 1; exit 0"}
			}, check: func(x *env, _ spec.Project) {
				first := x.inspect("crasher")
				// The kubelet's first back-off is 10 s, and more on a loaded
				// node.
				x.eventuallyWithin(time.Minute, "the crashed container restarted", func() string {
					d := x.inspect("crasher")
					if d.RestartCount < 1 || !d.StartedAt.After(first.StartedAt) {
						return errf("restart count %d, started at %v (first seen started at %v, count %d)", d.RestartCount, d.StartedAt, first.StartedAt, first.RestartCount)
					}
					return ""
				})
				x.eventually("the clean exit stays exited", func() string {
					d := x.inspect("finisher")
					if d.State != backends.StateExited || d.ExitCode != 0 {
						return errf("state %s, exit %d", d.State, d.ExitCode)
					}
					return ""
				})
				if d := x.inspect("finisher"); d.RestartCount != 0 {
					x.t.Fatalf("on-failure restarted a clean exit %d times", d.RestartCount)
				}
			}},
			{field: "restart.maxRetries", set: func(x *env, d *draft) {
				// on-failure:3 restarts exactly three times, then gives up.
				a := d.app("limited")
				a.Restart, a.Command = "on-failure:3", spec.Command{"sh", "-c", "echo run >> /tmp/runs; exit 1"}
			}, check: func(x *env, _ spec.Project) {
				x.eventually("three restarts, then stopped", func() string {
					d := x.inspect("limited")
					if d.RestartCount != 3 || d.State != backends.StateExited || d.ExitCode != 1 {
						return errf("restart count %d, state %s, exit %d", d.RestartCount, d.State, d.ExitCode)
					}
					return ""
				})
				time.Sleep(time.Second) // a fourth restart would show up here
				if d := x.inspect("limited"); d.RestartCount != 3 || d.Running() {
					x.t.Fatalf("after giving up: restart count %d, running %v", d.RestartCount, d.Running())
				}
			}},
		},
	},
	{
		name:   "read-only root filesystem",
		fields: []string{"readOnly"},
		sample: func(x *env) spec.App { return spec.App{Name: "app", ReadOnly: true} },
		run: func(x *env) {
			a := sleeper("app")
			a.ReadOnly = true
			a.Tmpfs = []spec.Tmpfs{{Target: "/tmp"}}
			x.up(x.proj(a))
			if _, code := x.sh("app", "touch /rootfile"); code == 0 {
				x.t.Fatal("root filesystem is writable")
			}
			x.mustSh("app", "touch /tmp/ok")
		},
	},
	{
		name: "capabilities added and dropped",
		parts: []part{
			{field: "capDrop", set: func(x *env, d *draft) { d.app("none").CapDrop = []string{"ALL"} }, check: func(x *env, _ spec.Project) {
				if out := x.mustSh("none", "grep CapEff /proc/self/status"); !strings.HasSuffix(out, "0000000000000000") {
					x.t.Fatalf("cap_drop ALL: %s", out)
				}
			}},
			// Adding back a capability of the default set takes nothing
			// from the host (adding others is in the host-power table); it
			// shows only once every other is dropped.
			{field: "capAdd", needs: []string{"capDrop"}, set: func(x *env, d *draft) {
				a := d.app("bind")
				a.CapDrop, a.CapAdd = []string{"ALL"}, []string{"NET_BIND_SERVICE"}
			}, check: func(x *env, _ spec.Project) {
				eff, err := strconv.ParseUint(strings.Fields(x.mustSh("bind", "grep CapEff /proc/self/status"))[1], 16, 64)
				if err != nil || eff != 1<<10 {
					x.t.Fatalf("cap_drop ALL + cap_add NET_BIND_SERVICE: CapEff %x, want only bit 10", eff)
				}
			}},
		},
	},
	{
		name:   "init process reaps and forwards signals",
		fields: []string{"init"},
		sample: func(x *env) spec.App { return spec.App{Name: "app", Init: ptr(true)} },
		run: func(x *env) {
			// The main process is sleep itself, which never waits for a
			// child: only an init reaps the orphans of an exec.
			main := spec.Command{"sh", "-c", "echo $$ > /tmp/pid; exec sleep 100000"}
			with := spec.App{Name: "with", Init: ptr(true), Command: main}
			without := spec.App{Name: "without", Command: main, StopGracePeriod: spec.DurationOf(time.Second)}
			x.up(x.proj(with, without))
			if pid := x.mustSh("with", "cat /tmp/pid"); pid == "1" {
				x.t.Fatal("the app runs as PID 1: no init process")
			}
			orphan := func(app string) (pid string, state func() string) {
				pid = x.mustSh(app, "sleep 0.3 >/dev/null 2>&1 & echo $!")
				return pid, func() string {
					out, _ := x.sh(app, "cut -d' ' -f3 /proc/"+pid+"/stat 2>/dev/null || echo gone")
					return out
				}
			}
			pid, state := orphan("with")
			x.eventually("init reaps the exited orphan "+pid, func() string {
				if s := state(); s != "gone" {
					return "its state: " + s
				}
				return ""
			})
			pid, state = orphan("without")
			var last string
			x.eventually("the orphan "+pid+" exits", func() string {
				if last = state(); last != "Z" && last != "gone" {
					return "its state: " + last
				}
				return ""
			})
			if last == "gone" {
				x.t.Logf("without init the runtime reaped the orphan itself (its PID 1 is %s)", x.mustSh("without", "cat /proc/1/comm"))
			} else {
				x.t.Logf("without init the orphan %s stays a zombie", pid)
			}
			if err := x.e.Stop(x.ctx, x.project, engine.LifecycleOptions{}); err != nil {
				x.t.Fatal(err)
			}
			if c := x.one("with"); c.ExitCode == 137 {
				x.t.Fatal("init did not forward SIGTERM (the container was killed)")
			}
		},
	},
	{
		name: "hosts file, DNS search and options",
		parts: []part{
			{field: "extraHosts", set: func(x *env, d *draft) { d.app("app").ExtraHosts = map[string][]string{"db.local": {"10.1.2.3"}} },
				check: func(x *env, _ spec.Project) {
					if out := x.mustSh("app", "grep db.local /etc/hosts"); !strings.Contains(out, "10.1.2.3") {
						x.t.Fatalf("/etc/hosts: %s", out)
					}
				}},
			{field: "dnsSearch", set: func(x *env, d *draft) { d.app("app").DNSSearch = []string{"corp.example"} },
				check: func(x *env, _ spec.Project) { x.checkResolvConf("app", `^search .*\bcorp\.example\b`) }},
			{field: "dnsOptions", set: func(x *env, d *draft) { d.app("app").DNSOptions = []string{"ndots:3"} },
				check: func(x *env, _ spec.Project) { x.checkResolvConf("app", `^options .*\bndots:3\b`) }},
		},
	},
	{
		name: "sysctls, ulimits and shm size",
		parts: []part{
			{field: "sysctls", set: func(x *env, d *draft) { d.app("app").Sysctls = map[string]string{"net.core.somaxconn": "1024"} },
				check: func(x *env, _ spec.Project) {
					if out := x.mustSh("app", "cat /proc/sys/net/core/somaxconn"); out != "1024" {
						x.t.Fatalf("somaxconn = %s", out)
					}
				}},
			{field: "ulimits", set: func(x *env, d *draft) {
				d.app("app").Ulimits = map[string]spec.Ulimit{"nofile": {Soft: 1024, Hard: 2048}}
			},
				check: func(x *env, _ spec.Project) {
					if f := strings.Fields(x.mustSh("app", "grep 'Max open files' /proc/1/limits")); len(f) < 5 || f[3] != "1024" || f[4] != "2048" {
						x.t.Fatalf("nofile limits = %q", f)
					}
				}},
			{field: "shmSize", set: func(x *env, d *draft) { d.app("app").ShmSize = 32 << 20 },
				check: func(x *env, _ spec.Project) {
					if out := x.mustSh("app", "df -k /dev/shm | tail -1"); !strings.Contains(out, "32768") {
						x.t.Fatalf("/dev/shm: %s", out)
					}
				}},
		},
	},
	{
		name: "memory and pids limits",
		parts: []part{
			{field: "resources.limits.memory", set: func(x *env, d *draft) { limits(d.app("app")).Memory = 64 << 20 },
				check: func(x *env, _ spec.Project) {
					mem := x.mustSh("app", "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max")
					if mem != strconv.Itoa(64<<20) {
						x.t.Fatalf("memory limit %s, want %d", mem, 64<<20)
					}
				}},
			{field: "resources.limits.pids", set: func(x *env, d *draft) { limits(d.app("app")).Pids = 50 },
				check: func(x *env, _ spec.Project) {
					pids := x.mustSh("app", "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max")
					if pids != "50" {
						x.t.Fatalf("pids limit %s, want 50", pids)
					}
				}},
		},
	},
	{
		name:   "logs separate stdout and stderr",
		fields: []string{"command"},
		run: func(x *env) {
			a := spec.App{Name: "app", Command: spec.Command{"sh", "-c", "echo to-out; echo to-err >&2; trap 'exit 0' TERM; while true; do sleep 0.2; done"}}
			x.up(x.proj(a))
			var out, errb bytes.Buffer
			x.eventually("logs", func() string {
				out.Reset()
				errb.Reset()
				if err := x.b.Logs(x.ctx, x.one("app").ID, backends.LogOptions{Tail: -1, Stdout: &out, Stderr: &errb}); err != nil {
					return err.Error()
				}
				if out.String() != "to-out\n" || errb.String() != "to-err\n" {
					return fmt.Sprintf("stdout %q stderr %q", out.String(), errb.String())
				}
				return ""
			})
		},
	},
	{
		name:   "exec: exit codes, stdin, environment",
		fields: []string{"command"},
		run: func(x *env) {
			x.up(x.proj(sleeper("app")))
			id := x.one("app").ID
			var out bytes.Buffer
			code, err := x.b.Exec(x.ctx, id, backends.ExecOptions{Cmd: []string{"sh", "-c", "cat; echo $EXTRA; exit 5"}, Env: []string{"EXTRA=e1"},
				Stdin: strings.NewReader("from-stdin\n"), Stdout: &out, Stderr: &out})
			if err != nil || code != 5 || out.String() != "from-stdin\ne1\n" {
				x.t.Fatalf("exec: code %d err %v out %q", code, err, out.String())
			}
			out.Reset()
			code, err = x.b.Exec(x.ctx, id, backends.ExecOptions{Cmd: []string{"sh", "-c", "test -t 1 && echo tty"}, TTY: true, Stdout: &out})
			if err != nil || code != 0 || !strings.Contains(out.String(), "tty") {
				x.t.Fatalf("exec with TTY: code %d err %v out %q", code, err, out.String())
			}
		},
	},
}
