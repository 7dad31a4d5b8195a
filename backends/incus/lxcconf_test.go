package incus

import (
	"errors"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// hook is the injection security round 2 confirmed live: a line break in
// a value became an LXC hook that ran as host root.
const hook = "x\nlxc.hook.pre-start = /bin/sh -c 'id > /tmp/pwned'"

// refusedText checks err is the typed refusal of a line-breaking value,
// naming field.
func refusedText(t *testing.T, err error, field string) {
	t.Helper()
	var te *lxcTextError
	if !errors.As(err, &te) || !errdefs.IsInvalidArgument(err) || te.Field != field {
		t.Fatalf("want an InvalidArgument lxcTextError for %s, got %v", field, err)
	}
}

// TestLXCConfigWriter locks down raw.lxc's one writer: KEY = VALUE lines,
// and a refusal (never a panic, never a partial text) for a key or value
// holding a line break, carriage return or NUL.
func TestLXCConfigWriter(t *testing.T) {
	var c lxcConfig
	c.set("lxc.uts.name", "web")
	c.set("lxc.seccomp.profile", "")
	if got, err := c.text(); err != nil || got != "lxc.uts.name = web\nlxc.seccomp.profile =\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, bad := range []struct{ key, value string }{
		{"lxc.uts.name", hook}, {"lxc.uts.name", "web\r"}, {"lxc.uts.name", "web\x00"}, {"lxc.uts.name\nlxc.hook.stop", "x"},
	} {
		var c lxcConfig
		c.set("lxc.signal.halt", "SIGTERM")
		c.set(bad.key, bad.value)
		c.set("lxc.net.0.ipv4.address", "10.0.0.2/24")
		got, err := c.text()
		refusedText(t, err, "raw.lxc "+bad.key)
		if got != "" {
			t.Errorf("%q: a refused configuration still gave text %q", bad.value, got)
		}
	}
}

// TestRawLXC: every value raw.lxc takes goes through the writer — the
// hostname, the init path and name, addresses.
func TestRawLXC(t *testing.T) {
	base := plan{Name: "cornus-web", InitPath: "/.cornus/bin/cornus", Spec: backends.ContainerSpec{Hostname: "web", Security: backends.Security{Seccomp: "unconfined"}},
		NICs: []nicPlan{{IP: "10.0.0.2", Prefix: 24, Gateway: "10.0.0.1"}}}
	got, err := rawLXC(base)
	want := "lxc.init.cmd = /.cornus/bin/cornus monitor incus cornus-web\nlxc.signal.halt = SIGTERM\nlxc.uts.name = web\n" +
		"lxc.net.0.ipv4.address = 10.0.0.2/24\nlxc.net.0.ipv4.gateway = 10.0.0.1\nlxc.seccomp.profile =\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	for field, mutate := range map[string]func(p *plan){
		"raw.lxc lxc.uts.name":           func(p *plan) { p.Spec.Hostname = hook },
		"raw.lxc lxc.init.cmd":           func(p *plan) { p.InitPath = "/bin/cornus\nlxc.hook.mount = /x" },
		"raw.lxc lxc.net.0.ipv4.address": func(p *plan) { p.NICs[0].IP = "10.0.0.2\nlxc.hook.start-host = /x" },
		"raw.lxc lxc.net.0.ipv4.gateway": func(p *plan) { p.NICs[0].Gateway = "10.0.0.1\r" },
	} {
		p := base
		p.NICs = []nicPlan{base.NICs[0]}
		mutate(&p)
		_, err := rawLXC(p)
		refusedText(t, err, field)
		if _, err := instanceBody(p); err == nil {
			t.Errorf("%s: instanceBody built a body around a refused raw.lxc", field)
		}
	}
}

// TestInstanceBodyText: the keys Incus maps into LXC's configuration
// (a sysctl's value did inject a hook, live) are refused in the body too,
// whatever put them there.
func TestInstanceBodyText(t *testing.T) {
	p := plan{Name: "cornus-web", InitPath: "/.cornus/bin/cornus", Spec: backends.ContainerSpec{Sysctls: map[string]string{"net.core.somaxconn": "100" + hook}}}
	_, err := instanceBody(p)
	refusedText(t, err, "incus config linux.sysctl.net.core.somaxconn")
	p = plan{Name: "cornus-web", Disks: []diskPlan{{Source: "/dev/sdz", Block: true, MountOptions: "ro\nlxc.hook.mount = /x", Path: "/d"}}}
	_, err = instanceBody(p)
	refusedText(t, err, "incus device disk0 raw.mount.options")
	p = plan{Name: "cornus-web", Spec: backends.ContainerSpec{Hostname: "web"}}
	if _, err := instanceBody(p); err != nil {
		t.Fatal(err)
	}
}

// TestCheckSpecText: Create refuses the spec's line-breaking text, naming
// the field, before it makes anything.
func TestCheckSpecText(t *testing.T) {
	for field, cs := range map[string]backends.ContainerSpec{
		"hostname":                     {Hostname: hook},
		"sysctls.net.core.somaxconn":   {Sysctls: map[string]string{"net.core.somaxconn": "1" + hook}},
		"sysctls.net.x\nlxc.y":         {Sysctls: map[string]string{"net.x\nlxc.y": "1"}},
		"env[1]":                       {Env: []string{"A=1", "B=" + hook}},
		"devices[0]":                   {Devices: []spec.Device{{Source: "/dev/null\n", Target: "/dev/x"}}},
		"mounts[0]":                    {Binds: []backends.Bind{{Source: "/srv", Target: "/x\n"}}},
		"volumes[0].target":            {Volumes: []backends.VolumeMount{{Target: "/x\r"}}},
		"volumes[0].driverOpts.o":      {Volumes: []backends.VolumeMount{{Target: "/x", DriverOpts: map[string]string{"o": "ro\nlxc.hook.mount = /x"}}}},
		"networks[0].aliases":          {Networks: []backends.NetworkAttachment{{Network: "n", Aliases: []string{"web", "db 10.0.0.9"}}}},
		"extraHosts[0]":                {ExtraHosts: []backends.HostEntry{{Host: "a\nb", IP: "10.0.0.1"}}},
		"hostname (a space splits it)": {Hostname: "web db"},
	} {
		want, _, _ := strings.Cut(field, " (")
		refusedText(t, checkSpecText(cs), want)
	}
	ok := backends.ContainerSpec{Hostname: "web", Env: []string{"A=b c"}, Sysctls: map[string]string{"net.core.somaxconn": "100"},
		Networks: []backends.NetworkAttachment{{Network: "n", Aliases: []string{"web", "db"}}}}
	if err := checkSpecText(ok); err != nil {
		t.Fatal(err)
	}
}
