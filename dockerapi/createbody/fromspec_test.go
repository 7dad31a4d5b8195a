package createbody

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

func ptr[T any](v T) *T { return &v }

// fullApp sets every spec.App field to a valid non-zero value.
func fullApp() spec.App {
	return spec.App{
		Name: "web", Image: "img:1", PullAuth: &spec.RegistryAuth{Server: "reg:5000"}, Build: &spec.Build{Context: "/src"}, PullPolicy: "never", Platform: "linux/amd64", Replicas: ptr(2),
		Restart: "on-failure:3", ContainerName: "web-x", Update: &spec.UpdateConfig{Parallelism: 2, Order: spec.UpdateStartFirst},
		Command: spec.Command{"serve"}, Entrypoint: spec.Command{"/bin/app"},
		WorkingDir: "/srv", User: "1000:1000", GroupAdd: []string{"audio"},
		Env: map[string]string{"Z": "1", "A": "2"}, Labels: map[string]string{"l": "v", "team": "x"},
		Hostname: "h", Domainname: "example.org",
		Ports:       []spec.Port{{HostIP: "127.0.0.1", Host: 8000, HostEnd: 8010, Container: 80}, {Container: 53, Protocol: "udp"}},
		Expose:      []string{"9000-9001"},
		Networks:    []spec.NetworkAttachment{{Name: "front", Aliases: []string{"www"}, IPv4: "10.5.0.9"}, {Name: "back", IPv6: "fd00::9"}},
		DNS:         []string{"1.1.1.1"},
		DNSSearch:   []string{"example.org"},
		DNSOptions:  []string{"ndots:2"},
		ExtraHosts:  map[string][]string{"db": {"10.0.0.2", "::1"}},
		Mounts:      []spec.Mount{{Source: "/src", Target: "/dst", ReadOnly: true, CreateHostPath: true, Propagation: "rslave"}},
		Volumes:     []spec.VolumeMount{{Source: "data", Target: "/data", NoCopy: true, Subpath: "sub"}, {Target: "/anon", Driver: "local", DriverOpts: map[string]string{"o": "x"}}},
		Tmpfs:       []spec.Tmpfs{{Target: "/run", Size: 1 << 20, Mode: 0o1777}},
		Secrets:     []spec.FileMount{{Name: "s", Target: "/run/secrets/s"}},
		Configs:     []spec.FileMount{{Name: "c", Target: "/etc/c"}},
		Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "true"}, Interval: spec.DurationOf(time.Second), Timeout: spec.DurationOf(2 * time.Second), StartPeriod: spec.DurationOf(3 * time.Second), StartInterval: spec.DurationOf(time.Second), Retries: ptr(4)},
		DependsOn:   map[string]spec.Dependency{"db": {Condition: spec.ConditionHealthy}},
		Hooks:       &spec.Hooks{PostStart: []spec.Hook{{Command: []string{"true"}}}},
		Resources: &spec.Resources{
			Limits:       &spec.ResourceLimits{CPUs: 1.5, Memory: 1 << 30, Pids: 100},
			Reservations: &spec.ResourceLimits{CPUs: 0.5, Memory: 1 << 29, Pids: 10},
		},
		StopSignal: "SIGINT", StopGracePeriod: ptr(spec.Duration(1500 * time.Millisecond)), Init: ptr(true),
		TTY: true, StdinOpen: true, ReadOnly: true, Privileged: true,
		CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"MKNOD"}, SecurityOpt: []string{"no-new-privileges"},
		Devices: []spec.Device{{Source: "/dev/fuse"}},
		Sysctls: map[string]string{"net.core.somaxconn": "1024"},
		Ulimits: map[string]spec.Ulimit{"nofile": {Soft: 1000, Hard: 2000}, "core": {}},
		ShmSize: 64 << 20, PidMode: "host", IpcMode: "shareable",
		UTSMode: "host", UsernsMode: "host", CgroupnsMode: "private", DeviceCgroupRules: []string{"c 1:3 mr"},
		Logging:      &spec.Logging{Driver: "json-file", Options: map[string]string{"max-size": "1m"}},
		Egress:       &spec.Egress{},
		Credentials:  []spec.Credential{{Name: "tok"}},
		Docker:       true,
		Devcontainer: &spec.Devcontainer{WorkspaceFolder: "/ws"},
		Watch:        []spec.WatchRule{{Path: "/src", Action: spec.WatchSync, Target: "/app"}},
	}
}

func fullSpec(app spec.App) backends.ResolveInput {
	return backends.ResolveInput{
		Project: "shop", App: app, Name: "shop-web-1",
		Labels:   map[string]string{backends.LabelProject: "shop", "l": "identity"},
		Networks: map[string]spec.Network{"front": {Name: "shop_front"}, "back": {}},
		Volumes:  map[string]spec.Volume{"data": {Name: "shop_data"}},
	}
}

// Fields the backend does not map, with the reason (anything else must
// change the create request).
var notMapped = map[string]string{
	"Name":          "identity: used for aliases only together with networks",
	"PullPolicy":    "engine",
	"Build":         "the client builds the image before up (builder); the image is what runs",
	"Replicas":      "engine",
	"Update":        "engine (rollout of a changed app); dockerhost declares it a gap",
	"ContainerName": "engine (ContainerSpec.Name)",
	"DependsOn":     "engine",
	"Hooks":         "engine",
	"Devcontainer":  "engine",
	"Watch":         "compose watch, on the client",
	"Secrets":       "engine resolves them into ContainerSpec.Files",
	"Configs":       "engine resolves them into ContainerSpec.Files",
	"Egress":        "declared gap",
	"Credentials":   "the caretaker companion's (remote mode), not the app's create",
	"Docker":        "the caretaker companion's (remote mode): a socket and DOCKER_HOST the companion adds",
	"PullAuth":      "the server's registry credential for the kubernetes nodes; no Docker create field",
}

// Locks down that every spec.App field reaches Docker's create request
// through Resolve and FromSpec
// (or is listed above with why not): clearing any one changes the request.
func TestFromSpecMapsEveryField(t *testing.T) {
	full := fullApp()
	base := marshalRequest(t, fullSpec(full), "1.45")
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if v.Field(i).IsZero() && f.Name != "NetworkMode" { // exclusive with Networks
			t.Fatalf("fullApp leaves %s unset", f.Name)
		}
		if _, skip := notMapped[f.Name]; skip {
			continue
		}
		app := fullApp()
		if f.Name == "NetworkMode" {
			app.Networks = nil
			app.NetworkMode = "container:abc"
		} else {
			reflect.ValueOf(&app).Elem().Field(i).SetZero()
		}
		if got := marshalRequest(t, fullSpec(app), "1.45"); got == base {
			t.Errorf("clearing App.%s does not change the create request", f.Name)
		}
	}
}

func marshalRequest(t *testing.T, in backends.ResolveInput, api string) string {
	t.Helper()
	req, err := build(in, api)
	if err != nil {
		t.Fatalf("FromSpec: %v", err)
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Locks down the mapping details of the create request at API 1.41.
func TestFromSpec(t *testing.T) {
	req, err := build(fullSpec(fullApp()), "1.41")
	if err != nil {
		t.Fatal(err)
	}
	cfg, hc := req.Config, req.HostConfig
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("env", cfg.Env, []string{"A=2", "Z=1"})
	check("labels", cfg.Labels, map[string]string{backends.LabelProject: "shop", "l": "identity", "team": "x"})
	check("entrypoint", cfg.Entrypoint, []string{"/bin/app"})
	check("stop timeout", *cfg.StopTimeout, 2)
	check("restart", hc.RestartPolicy, container.RestartPolicy{Name: "on-failure", MaximumRetryCount: 3})
	check("binds", hc.Binds, []string{"/src:/dst:ro,rslave"})
	check("extra hosts", hc.ExtraHosts, []string{"db:10.0.0.2", "db:::1"})
	check("nano cpus", hc.NanoCPUs, int64(1_500_000_000))
	check("memory", hc.Memory, int64(1<<30))
	check("memory reservation", hc.MemoryReservation, int64(1<<29))
	check("pids", *hc.PidsLimit, int64(100))
	check("device", hc.Devices, []container.DeviceMapping{{PathOnHost: "/dev/fuse", PathInContainer: "/dev/fuse", CgroupPermissions: "rwm"}})
	check("ulimits order", []string{hc.Ulimits[0].Name, hc.Ulimits[1].Name}, []string{"core", "nofile"})
	check("network mode", string(hc.NetworkMode), "shop_front")
	check("platform", req.Platform.Architecture, "amd64")
	check("healthcheck start interval at 1.41", cfg.Healthcheck.StartInterval, time.Duration(0))
	check("healthcheck retries", cfg.Healthcheck.Retries, 4)

	ep := req.Networking.EndpointsConfig["shop_front"]
	check("aliases", ep.Aliases, []string{"web", "www"})
	check("ipv4", ep.IPAMConfig.IPv4Address.String(), "10.5.0.9")
	if len(req.Connect) != 1 || req.Connect[0].Name != "shop_back" || req.Connect[0].Endpoint.IPAMConfig.IPv6Address.String() != "fd00::9" {
		t.Errorf("connect: %+v", req.Connect)
	}
	ports, _ := json.Marshal(hc.PortBindings)
	check("ports", string(ports), `{"53/udp":[{"HostIp":"","HostPort":""}],"80/tcp":[{"HostIp":"127.0.0.1","HostPort":"8000-8010"}]}`)
	var exposed []string
	for p := range cfg.ExposedPorts {
		exposed = append(exposed, p.String())
	}
	slices.Sort(exposed)
	check("exposed", exposed, []string{"53/udp", "80/tcp", "9000/tcp", "9001/tcp"})

	check("mount count", len(hc.Mounts), 3)
	check("named volume", hc.Mounts[0], mount.Mount{Type: mount.TypeVolume, Source: "shop_data", Target: "/data", VolumeOptions: &mount.VolumeOptions{NoCopy: true}})
	check("anonymous volume", hc.Mounts[1].VolumeOptions.DriverConfig, &mount.Driver{Name: "local", Options: map[string]string{"o": "x"}})
	check("tmpfs", *hc.Mounts[2].TmpfsOptions, mount.TmpfsOptions{SizeBytes: 1 << 20, Mode: 0o1777})

	newer, err := build(fullSpec(fullApp()), "1.45")
	if err != nil {
		t.Fatal(err)
	}
	check("subpath at 1.45", newer.HostConfig.Mounts[0].VolumeOptions.Subpath, "sub")
	check("start interval at 1.45", newer.Config.Healthcheck.StartInterval, time.Second)
}

// Locks down command/entrypoint clearing, healthcheck disable, bind
// mounts without createHostPath and spec errors (InvalidArgument naming
// the field).
func TestFromSpecCases(t *testing.T) {
	buildApp := func(a spec.App) (Request, error) {
		a.Image = "img"
		return build(backends.ResolveInput{Name: "x", App: a}, "1.41")
	}
	req, _ := buildApp(spec.App{Entrypoint: spec.Command{}, Command: spec.Command{}})
	if !slices.Equal(req.Config.Entrypoint, []string{""}) || req.Config.Cmd == nil || len(req.Config.Cmd) != 0 || req.ClearCmd {
		t.Errorf("cleared entrypoint and command: %+v", req.Config)
	}
	req, _ = buildApp(spec.App{Command: spec.Command{}})
	if !req.ClearCmd || req.Config.Entrypoint != nil {
		t.Errorf("cleared command keeps the image entrypoint: %+v", req)
	}
	req, _ = buildApp(spec.App{})
	if req.Config.Entrypoint != nil || req.Config.Cmd != nil || req.HostConfig.RestartPolicy.Name != "no" {
		t.Errorf("defaults: %+v", req.Config)
	}
	req, _ = buildApp(spec.App{Healthcheck: &spec.Healthcheck{Disable: true, Test: []string{"CMD", "x"}}})
	if !slices.Equal(req.Config.Healthcheck.Test, []string{"NONE"}) {
		t.Errorf("disabled healthcheck: %+v", req.Config.Healthcheck)
	}
	req, _ = buildApp(spec.App{Mounts: []spec.Mount{{Source: "/a", Target: "/b", Propagation: "shared"}}})
	if m := req.HostConfig.Mounts; len(m) != 1 || m[0].Type != mount.TypeBind || m[0].BindOptions.Propagation != "shared" || req.HostConfig.Binds != nil {
		t.Errorf("bind mount: %+v", m)
	}
	req, _ = buildApp(spec.App{NetworkMode: "host"})
	if req.HostConfig.NetworkMode != "host" || req.Networking != nil {
		t.Errorf("network mode: %+v", req.HostConfig.NetworkMode)
	}
	for _, tc := range []struct {
		app  spec.App
		want string
	}{
		{spec.App{Restart: "sometimes"}, "restart"},
		{spec.App{Restart: "always:3"}, "restart"},
		{spec.App{DNS: []string{"dns.example"}}, "dns"},
		{spec.App{NetworkMode: "service:db"}, "networkMode"}, // no such service: nothing to share
		{spec.App{Ports: []spec.Port{{Container: 70000}}}, "ports[0].container"},
		{spec.App{Ports: []spec.Port{{Container: 80, HostIP: "localhost"}}}, "ports[0].hostIP"},
		{spec.App{Expose: []string{"x"}}, "expose[0]"},
		{spec.App{Networks: []spec.NetworkAttachment{{Name: "n", IPv4: "fd00::1"}}}, "networks[0].ipv4"},
		{spec.App{Mounts: []spec.Mount{{Source: "/a", Target: "/b", Propagation: "weird"}}}, "mounts[0].propagation"},
		{spec.App{Platform: "amd64"}, "platform"},
	} {
		_, err := buildApp(tc.app)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (!errdefs.IsInvalidArgument(err) && !errdefs.IsFailedPrecondition(err)) {
			t.Errorf("%+v: err %v, want InvalidArgument (or FailedPrecondition) naming %s", tc.app, err, tc.want)
		}
	}
}

// build resolves an input and maps it for an API version, as the
// dockerhost backend does.
func build(in backends.ResolveInput, api string) (Request, error) {
	cs, err := backends.Resolve(in)
	if err != nil {
		return Request{}, err
	}
	return FromSpec(cs, Options{StartInterval: api >= "1.44", Subpath: api >= "1.45"})
}
