package backends

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// TestResolve pins each conversion Resolve makes from spec strings to the
// typed values backends map (issue 23: the one place they are parsed).
func TestResolve(t *testing.T) {
	retries := 3
	for _, c := range []struct {
		name string
		in   ResolveInput
		want func(ContainerSpec) any
		is   any
	}{
		{"restart on-failure:N", ResolveInput{App: spec.App{Restart: "on-failure:5"}},
			func(cs ContainerSpec) any { return cs.Restart }, spec.RestartPolicy{Name: "on-failure", MaxRetries: 5}},
		{"restart unset is no", ResolveInput{App: spec.App{}},
			func(cs ContainerSpec) any { return cs.Restart }, spec.RestartPolicy{}},
		{"stop signal by number", ResolveInput{App: spec.App{StopSignal: "9"}},
			func(cs ContainerSpec) any { return cs.StopSignal }, spec.SIGKILL},
		{"stop signal without SIG", ResolveInput{App: spec.App{StopSignal: "usr1"}},
			func(cs ContainerSpec) any { return cs.StopSignal }, spec.Signal(10)},
		{"stop grace period", ResolveInput{App: spec.App{StopGracePeriod: spec.DurationOf(3 * time.Second)}},
			func(cs ContainerSpec) any { return *cs.StopTimeout }, 3 * time.Second},
		{"platform", ResolveInput{App: spec.App{Platform: "linux/arm64/v8"}},
			func(cs ContainerSpec) any { return *cs.Platform }, Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}},
		{"network runtime name from the project", ResolveInput{Project: "p", App: spec.App{Name: "web",
			Networks: []spec.NetworkAttachment{{Name: "back", Aliases: []string{"w", "web"}}}}, Networks: map[string]spec.Network{"back": {}}},
			func(cs ContainerSpec) any { return cs.Networks },
			[]NetworkAttachment{{Network: "p_back", Key: "back", Aliases: []string{"web", "w"}}}},
		{"network's own name wins", ResolveInput{Project: "p", App: spec.App{Networks: []spec.NetworkAttachment{{Name: "ext"}}},
			Networks: map[string]spec.Network{"ext": {Name: "shared"}}},
			func(cs ContainerSpec) any { return cs.Networks[0].Network }, "shared"},
		{"volume runtime name", ResolveInput{Project: "p", App: spec.App{Volumes: []spec.VolumeMount{{Source: "data", Target: "/d"}}},
			Volumes: map[string]spec.Volume{"data": {}}},
			func(cs ContainerSpec) any { return cs.Volumes[0].Name }, "p_data"},
		{"undeclared volume keeps its name", ResolveInput{Project: "p", App: spec.App{Volumes: []spec.VolumeMount{{Source: "raw", Target: "/d"}}}},
			func(cs ContainerSpec) any { return cs.Volumes[0].Name }, "raw"},
		{"inline driver options mean the local driver", ResolveInput{App: spec.App{Volumes: []spec.VolumeMount{{Target: "/d", DriverOpts: map[string]string{"type": "tmpfs"}}}}},
			func(cs ContainerSpec) any { return cs.Volumes[0].Driver }, "local"},
		{"service namespace is its first replica", ResolveInput{App: spec.App{PidMode: "service:db"}, Services: map[string]string{"db": "abc"}},
			func(cs ContainerSpec) any { return cs.PID }, NamespaceMode{Kind: "container", Container: "abc"}},
		{"container network mode", ResolveInput{App: spec.App{NetworkMode: "container:xyz"}},
			func(cs ContainerSpec) any { return cs.Network }, NetworkMode{Kind: "container", Container: "xyz"}},
		{"a companion's network namespace beats bridge", ResolveInput{App: spec.App{NetworkMode: "bridge"}, JoinNetwork: "comp"},
			func(cs ContainerSpec) any { return cs.Network }, NetworkMode{Kind: "container", Container: "comp"}},
		{"service network mode", ResolveInput{App: spec.App{NetworkMode: "service:web"}, Services: map[string]string{"web": "w1"}},
			func(cs ContainerSpec) any { return cs.Network }, NetworkMode{Kind: "container", Container: "w1"}},
		{"host network mode", ResolveInput{App: spec.App{NetworkMode: "host"}},
			func(cs ContainerSpec) any { return cs.Network }, NetworkMode{Kind: "host"}},
		{"ports in one order, tcp by default", ResolveInput{App: spec.App{Ports: []spec.Port{{Container: 90, Protocol: "udp"}, {Container: 80, Host: 8080}}}},
			func(cs ContainerSpec) any { return cs.Ports },
			[]PortMapping{{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}, {ContainerPort: 90, Protocol: "udp"}}},
		{"expose ranges", ResolveInput{App: spec.App{Expose: []string{"7000-7001/udp"}}},
			func(cs ContainerSpec) any { return cs.Expose }, []ExposedPort{{Port: 7000, Protocol: "udp"}, {Port: 7001, Protocol: "udp"}}},
		{"extra hosts sorted", ResolveInput{App: spec.App{ExtraHosts: map[string][]string{"b": {"10.0.0.2"}, "a": {"10.0.0.1"}}}},
			func(cs ContainerSpec) any { return cs.ExtraHosts }, []HostEntry{{Host: "a", IP: "10.0.0.1"}, {Host: "b", IP: "10.0.0.2"}}},
		{"env sorted", ResolveInput{App: spec.App{Env: map[string]string{"B": "2", "A": "1"}}},
			func(cs ContainerSpec) any { return cs.Env }, []string{"A=1", "B=2"}},
		{"identity labels win", ResolveInput{App: spec.App{Labels: map[string]string{"k": "app", "o": "x"}}, Labels: map[string]string{"k": "id"}},
			func(cs ContainerSpec) any { return cs.Labels }, map[string]string{"k": "id", "o": "x"}},
		{"capabilities in Docker's names", ResolveInput{App: spec.App{CapAdd: []string{"cap_net_admin", " SYS_TIME", "all"}, CapDrop: []string{"CAP_MKNOD"}}},
			func(cs ContainerSpec) any { return [][]string{cs.CapAdd, cs.CapDrop} }, [][]string{{"NET_ADMIN", "SYS_TIME", "ALL"}, {"MKNOD"}}},
		{"security options, both separators", ResolveInput{App: spec.App{SecurityOpt: []string{
			"no-new-privileges", "seccomp:unconfined", "apparmor=unconfined", "disable", "label:level:s0",
			"systempaths=unconfined", "mask=/a:/b", "unmask=ALL", "writable-cgroups=true"}}},
			func(cs ContainerSpec) any { return cs.Security }, Security{NoNewPrivileges: true, Seccomp: "unconfined", AppArmor: "unconfined",
				SELinux: []string{"disable", "level:s0"}, SystemPathsUnconfined: true, Mask: []string{"/a", "/b"}, Unmask: []string{"ALL"}, WritableCgroups: true}},
		{"the default seccomp profile by name is the default", ResolveInput{App: spec.App{SecurityOpt: []string{"seccomp=builtin", "no-new-privileges=false"}}},
			func(cs ContainerSpec) any { return cs.Security }, Security{}},
		{"a seccomp profile is kept as given", ResolveInput{App: spec.App{SecurityOpt: []string{"seccomp=/p.json"}}},
			func(cs ContainerSpec) any { return cs.Security.Seccomp }, "/p.json"},
		{"healthcheck NONE disables", ResolveInput{App: spec.App{Healthcheck: &spec.Healthcheck{Test: []string{"NONE"}}}},
			func(cs ContainerSpec) any { return *cs.Healthcheck }, Healthcheck{Disabled: true}},
		{"healthcheck durations", ResolveInput{App: spec.App{Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "true"},
			Interval: spec.DurationOf(time.Second), Retries: &retries}}},
			func(cs ContainerSpec) any { return *cs.Healthcheck }, Healthcheck{Test: []string{"CMD", "true"}, Interval: time.Second, Retries: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, err := Resolve(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.want(cs); !reflect.DeepEqual(got, c.is) {
				t.Fatalf("got %#v, want %#v", got, c.is)
			}
		})
	}
}

// TestResolveRefuses: what Resolve cannot type is an invalid argument
// naming the field.
func TestResolveRefuses(t *testing.T) {
	for name, a := range map[string]spec.App{
		"restart":                            {Restart: "sometimes"},
		"stopSignal":                         {StopSignal: "SIGNOPE"},
		"platform":                           {Platform: "linux"},
		"expose[0]":                          {Expose: []string{"x"}},
		"networks":                           {NetworkMode: "host", Networks: []spec.NetworkAttachment{{Name: "n"}}},
		"networkMode":                        {NetworkMode: "service:gone"},
		"capAdd[1]":                          {CapAdd: []string{"NET_ADMIN", "NET_MAGIC"}},
		"capDrop[0]":                         {CapDrop: []string{""}},
		"securityOpt[0]: \"future-knob=on\"": {SecurityOpt: []string{"future-knob=on"}},
		"securityOpt[1]: \"no-new-privileges=maybe\"": {SecurityOpt: []string{"seccomp=unconfined", "no-new-privileges=maybe"}},
		"securityOpt[0]: \"systempaths=confined\"":    {SecurityOpt: []string{"systempaths=confined"}},
		"securityOpt[0]: \"apparmor\"":                {SecurityOpt: []string{"apparmor"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Resolve(ResolveInput{App: a})
			if err == nil || !(errdefs.IsInvalidArgument(err) || errdefs.IsFailedPrecondition(err)) {
				t.Fatalf("want a refusal, got %v", err)
			}
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("the error does not name %s: %v", name, err)
			}
		})
	}
}

// TestRefusal: a field the backend declares refused is an error naming
// the service and field before anything is made; other fields are not.
func TestRefusal(t *testing.T) {
	caps := Capabilities{Refused: map[string]string{"networkMode=service": "no shared namespaces"}}
	err := Refusal("x", caps, spec.App{Name: "side", NetworkMode: "service:api"})
	if !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), "services.side: networkMode=service") {
		t.Fatalf("refusal: %v", err)
	}
	if err := Refusal("x", caps, spec.App{Name: "side", NetworkMode: "host"}); err != nil {
		t.Fatalf("host is not refused: %v", err)
	}
}
