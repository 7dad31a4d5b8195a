package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestLoadSingleApp locks down the single-app deploy.yaml form: the app's
// name is the project name, referenced networks and volumes are declared,
// relative binds resolve against the file's directory (issue #2).
func TestLoadSingleApp(t *testing.T) {
	p, err := Load("deploy.yaml", "/srv/app", []byte(`
name: web
image: nginx:1.27
replicas: 2
restart: on-failure:3
ports: [{container: 80, host: 8080}, {container: 53, protocol: udp}]
mounts: [{source: ./html, target: /usr/share/nginx/html, readOnly: true}]
volumes: [{source: cache, target: /cache}, {target: /tmp/anon}]
networks: [{name: front, aliases: [www]}]
stopGracePeriod: 1m30s
healthcheck: {test: [CMD, "true"], interval: 2s, retries: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := p.Services["web"]
	if p.Name != "web" || a.Name != "web" || a.ReplicaCount() != 2 {
		t.Fatalf("name/replicas: %+v", p)
	}
	if got := a.Mounts[0].Source; got != "/srv/app/html" {
		t.Errorf("bind source = %q, want /srv/app/html", got)
	}
	if p.Networks["front"].Name != "web_front" || p.Volumes["cache"].Name != "web_cache" {
		t.Errorf("declared resources: %+v %+v", p.Networks, p.Volumes)
	}
	if a.StopGracePeriod.Std() != 90*time.Second || a.Healthcheck.Interval.Std() != 2*time.Second {
		t.Errorf("durations: %v %v", a.StopGracePeriod, a.Healthcheck.Interval)
	}
}

// TestLoadProjectDefaultNetwork: apps naming no network join "default",
// declared as <project>_default, exactly as Compose does.
func TestLoadProjectDefaultNetwork(t *testing.T) {
	p, err := Load("deploy.yaml", "/", []byte(`
name: shop
services:
  web: {image: nginx}
  db: {image: postgres, networkMode: none}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Services["web"].Networks; !reflect.DeepEqual(got, []NetworkAttachment{{Name: "default"}}) {
		t.Errorf("web networks = %+v", got)
	}
	if len(p.Services["db"].Networks) != 0 {
		t.Errorf("db with networkMode got networks %+v", p.Services["db"].Networks)
	}
	if p.Networks["default"].Name != "shop_default" {
		t.Errorf("default network = %+v", p.Networks["default"])
	}
}

// TestLoadErrors locks down exact messages: strict fields with suggestions,
// type errors with paths and lines, and all problems reported together.
func TestLoadErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"empty", ``, "deploy.yaml: empty document: expected `services:` (a project) or `image:` (a single app)"},
		{"not a mapping", `[1, 2]`, "deploy.yaml: expected a mapping at the top level, got a list"},
		{"syntax", "name: a\n  image: b\n", "deploy.yaml: line 2: mapping values are not allowed in this context"},
		{"unknown field", "name: a\nimagee: b\n", `deploy.yaml: imagee (line 2): unknown field "imagee"; did you mean "image"?`},
		{"several", "name: a\nservices:\n  web:\n    image: x\n    replicas: lots\n    ports: 80\n    helthcheck: {}\n",
			"deploy.yaml: 3 problems:\n" +
				"  services.web.replicas (line 5): expected an integer, got \"lots\"\n" +
				"  services.web.ports (line 6): expected a list, got \"80\"\n" +
				"  services.web.helthcheck (line 7): unknown field \"helthcheck\"; did you mean \"healthcheck\"?"},
		{"bad duration", "name: a\nimage: b\nstopGracePeriod: 5x\n", `deploy.yaml: stopGracePeriod (line 3): invalid duration "5x": unknown unit "x" (use ns, us, ms, s, m, h, d or w)`},
		{"bare number duration", "name: a\nimage: b\nstopGracePeriod: 10\n", `deploy.yaml: stopGracePeriod (line 3): invalid duration "10": missing unit (use ns, us, ms, s, m, h, d or w)`},
		{"bad size", "name: a\nimage: b\nshmSize: 12q\n", `deploy.yaml: shmSize (line 3): invalid size "12q": unknown unit "q" (use b, k, m, g or t)`},
		{"duplicate key", "name: a\nimage: b\nimage: c\n", `deploy.yaml: line 3: mapping key "image" already defined at line 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("deploy.yaml", "/", []byte(c.doc))
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestValidateAllProblems: Validate reports every problem at once, each
// with its field path (issue #2's example services.web.ports[1].container).
func TestValidateAllProblems(t *testing.T) {
	neg := -1
	p := Project{
		Name: "Bad Name",
		Services: map[string]App{
			"web": {
				Image:       "nginx",
				Replicas:    &neg,
				Restart:     "sometimes",
				Ports:       []Port{{Container: 80}, {Container: 70000, Protocol: "icmp", HostIP: "nope"}},
				Networks:    []NetworkAttachment{{Name: "missing", IPv4: "::1"}},
				Volumes:     []VolumeMount{{Source: "undeclared", Target: "data"}},
				Mounts:      []Mount{{Source: "/a", Target: "/x"}, {Source: "/b", Target: "/x/"}},
				Healthcheck: &Healthcheck{Test: []string{"RUN", "x"}},
				DependsOn:   map[string]Dependency{"db": {Condition: "service_ready"}, "ghost": {Condition: ConditionStarted}},
				StopSignal:  "SIGNOPE",
				Ulimits:     map[string]Ulimit{"nofile": {Soft: 10, Hard: 5}},
				Secrets:     []FileMount{{Name: "s", File: "/f", Content: "x"}},
				Egress:      &Egress{Mode: "vpn", Rules: []EgressRule{{Pattern: "", Route: "moon"}}},
			},
			"db": {Image: "", DependsOn: map[string]Dependency{"web": {Condition: ConditionStarted}}},
		},
	}
	err := p.Validate()
	want := []string{
		`name: "Bad Name" is not a valid project name: use lowercase letters, digits, '-' and '_', starting with a letter or digit`,
		`services.db.image: required: name the image to run`,
		`services.web.replicas: must be 0 or more`,
		`services.web.restart: "sometimes" is not one of no, always, on-failure[:N], unless-stopped`,
		`services.web.ports[1].container: must be 1-65535`,
		`services.web.ports[1].protocol: "icmp" is not one of tcp, udp, sctp`,
		`services.web.ports[1].hostIP: "nope" is not an IP address`,
		`services.web.networks[0].name: network "missing" is not declared under networks`,
		`services.web.networks[0].ipv4: "::1" is not an IPv4 address`,
		`services.web.mounts[1].target: "/x/" is already mounted by services.web.mounts[0]`,
		`services.web.volumes[0].target: "data" must be an absolute path in the container`,
		`services.web.volumes[0].source: volume "undeclared" is not declared under volumes`,
		`services.web.healthcheck.test: must start with CMD, CMD-SHELL or NONE (got "RUN")`,
		`services.web.dependsOn.db.condition: "service_ready" is not one of service_started, service_healthy, service_completed_successfully`,
		`services.web.dependsOn.ghost: service "ghost" is not defined (mark the dependency required: false if it is optional)`,
		`services.web.stopSignal: "SIGNOPE" is not a signal name such as SIGTERM or SIGINT`,
		`services.web.ulimits.nofile: soft limit 10 exceeds hard limit 5`,
		`services.web.secrets[0]: set exactly one of file, environment or content`,
		`services.web.egress.mode: "vpn" is not one of env, proxy, transparent`,
		`services.web.egress.rules[0].pattern: required: a host glob, CIDR or host:port`,
		`services.web.egress.rules[0].route: "moon" is not one of client, gateway, cluster, deny`,
		`services.db.dependsOn: dependency cycle: db -> web -> db`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing problem %q", w)
		}
	}
	if n := strings.Count(got, "\n  "); n != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", n, len(want), got)
	}
}

// TestEncodeRoundTrip: a printed spec loads back to the same project.
func TestEncodeRoundTrip(t *testing.T) {
	src := []byte(`name: rt
services:
  web:
    image: nginx
    entrypoint: []
    command: [a, b]
    tmpfs: [{target: /run, size: 64m, mode: "1777"}]
    secrets: [{name: s, content: hi, mode: 0o400}]
    resources: {limits: {cpus: 1.5, memory: 1g}}
`)
	p, err := Load("a.yaml", "/", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []func() ([]byte, error){p.EncodeYAML, p.EncodeJSON} {
		out, err := enc()
		if err != nil {
			t.Fatal(err)
		}
		q, err := Load("b", "/", out)
		if err != nil {
			t.Fatalf("reload: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(p, q) {
			t.Errorf("round trip changed the project:\n%s", out)
		}
	}
	if e := p.Services["web"].Entrypoint; e == nil || len(e) != 0 {
		t.Errorf("explicit empty entrypoint lost: %#v", e)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "10s": 10 * time.Second, "1m30s": 90 * time.Second, "1.5h": 90 * time.Minute,
		"2d": 48 * time.Hour, "1w": 7 * 24 * time.Hour, "500ms": 500 * time.Millisecond, "10us": 10 * time.Microsecond,
	} {
		got, err := ParseDuration(in)
		if err != nil || got.Std() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "s", "10", "5x", "1m30", "-1s", "1..2s"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	for d, want := range map[time.Duration]string{90 * time.Second: "1m30s", time.Hour: "1h", 1500 * time.Millisecond: "1s500ms", 0: "0s"} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v).String() = %q, want %q", d, got, want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]Bytes{"1024": 1024, "512m": 512 << 20, "1g": 1 << 30, "1.5g": 3 << 29, "64kb": 64 << 10, "2GiB": 2 << 30, "100b": 100} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "m", "12q", "-1"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

func TestParseRestartAndSignal(t *testing.T) {
	for in, want := range map[string]RestartPolicy{"no": {Name: "no"}, "on-failure": {Name: "on-failure"}, "on-failure:5": {Name: "on-failure", MaxRetries: 5}, "unless-stopped": {Name: "unless-stopped"}} {
		if got, err := ParseRestart(in); err != nil || got != want {
			t.Errorf("ParseRestart(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"yes", "always:3", "on-failure:x", "on-failure:-1"} {
		if _, err := ParseRestart(bad); err == nil {
			t.Errorf("ParseRestart(%q) accepted", bad)
		}
	}
	for in, want := range map[string]int{"SIGTERM": 15, "TERM": 15, "sigint": 2, "9": 9, "SIGRTMIN+3": 37} {
		if got, ok := ParseSignal(in); !ok || got != want {
			t.Errorf("ParseSignal(%q) = %d, %v", in, got, ok)
		}
	}
}
