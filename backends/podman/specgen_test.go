package podman

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

var update = flag.Bool("update", false, "rewrite the golden SpecGenerator bodies")

// fullSpec sets every field podman can express.
func fullSpec() backends.ContainerSpec {
	grace := 2500 * time.Millisecond
	return backends.ContainerSpec{
		Project: "shop", App: "web", Replica: 1, Name: "shop-web-1",
		Labels: map[string]string{"com.docker.compose.project": "shop", "team": "core"},
		Image:  "cornus-test/busybox:2", Platform: &backends.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"},
		Entrypoint: []string{"sh", "-c"}, Command: []string{"exec httpd -f"},
		Env: []string{"A=1", "B=x=y"}, User: "1000:1000", WorkingDir: "/srv", Hostname: "web", Domainname: "example.test",
		GroupAdd: []string{"65534"}, TTY: true, StdinOpen: true, Init: true, ReadOnly: true,
		Restart: spec.RestartPolicy{Name: "on-failure", MaxRetries: 3}, StopSignal: spec.Signal(syscall.SIGUSR1), StopTimeout: &grace,
		Healthcheck: &backends.Healthcheck{Test: []string{"CMD-SHELL", "true"}, Interval: time.Second, Timeout: 2 * time.Second, StartPeriod: 3 * time.Second, Retries: 4},
		Networks:    []backends.NetworkAttachment{{Network: "shop_back", Key: "back", Aliases: []string{"web", "api"}, IPv4: "10.5.0.9"}, {Network: "shop_front", Key: "front", Aliases: []string{"web"}}},
		Ports: []backends.PortMapping{{HostIP: "127.0.0.1", HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}, {ContainerPort: 53, Protocol: "udp"},
			{HostPort: 9000, HostPortEnd: 9010, ContainerPort: 90, Protocol: "tcp"}},
		Expose: []backends.ExposedPort{{Port: 7000, Protocol: "tcp"}, {Port: 7000, Protocol: "udp"}},
		DNS:    []string{"10.9.9.9"}, DNSSearch: []string{"corp.example"}, DNSOptions: []string{"ndots:3"},
		ExtraHosts: []backends.HostEntry{{Host: "db.local", IP: "10.1.2.3"}},
		Binds:      []backends.Bind{{Source: "/srv/data", Target: "/data", ReadOnly: true, Propagation: "rslave"}},
		Volumes: []backends.VolumeMount{{Name: "shop_cache", Target: "/cache", NoCopy: true}, {Target: "/anon"},
			{Name: "shop_cache", Target: "/sub", Subpath: "a/b", ReadOnly: true}, {Target: "/opts", Driver: "local", DriverOpts: map[string]string{"type": "tmpfs"}}},
		Tmpfs:  []backends.TmpfsMount{{Target: "/run", Size: 1 << 20, Mode: 0o1777}},
		PID:    backends.NamespaceMode{Kind: "container", Container: "abc"},
		IPC:    backends.NamespaceMode{Kind: "shareable"},
		Cgroup: backends.NamespaceMode{Kind: "private"},
		CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"MKNOD"},
		Security:          backends.Security{NoNewPrivileges: true, Seccomp: "unconfined", AppArmor: "unconfined", SELinux: []string{"disable"}, SystemPathsUnconfined: true},
		Devices:           []spec.Device{{Source: "/dev/null", Target: "/dev/xnull", Permissions: "rwm"}, {Source: "/dev/zero"}},
		DeviceCgroupRules: []string{"c 1:11 w", "a *:* rwm"},
		Sysctls:           map[string]string{"net.core.somaxconn": "1024"},
		Ulimits:           []backends.Ulimit{{Name: "nofile", Soft: 1024, Hard: 2048}},
		ShmSize:           32 << 20,
		Resources:         backends.Resources{CPUs: 1.5, Memory: 64 << 20, Pids: 50, MemoryReservation: 32 << 20},
		Logging:           &spec.Logging{Driver: "json-file", Options: map[string]string{"max-size": "10m", "tag": "web"}},
	}
}

// Locks down the SpecGenerator body: every field podman can express, in
// podman's words (golden file; -update rewrites it).
func TestBuildSpecGolden(t *testing.T) {
	cases := map[string]struct {
		cs backends.ContainerSpec
		o  buildOptions
	}{
		"full": {fullSpec(), buildOptions{
			HostPorts: map[int]int{2: 9003}, VolumeNames: map[int]string{3: "shop-web-1-anon-x"},
			Mountpoints:    map[int]string{2: "/var/lib/containers/storage/volumes/shop_cache/_data"},
			DefaultUlimits: []backends.Ulimit{{Name: "nofile", Soft: 20000, Hard: 20000}, {Name: "nproc", Soft: 32768, Hard: 32768}},
		}},
		// Docker's defaults fill in what the spec leaves unset; the start
		// interval rides on a label for the healthcheck driver.
		"health-defaults": {backends.ContainerSpec{Name: "a-1", Image: "img",
			Healthcheck: &backends.Healthcheck{Test: []string{"CMD", "true"}, StartPeriod: time.Second, StartInterval: 200 * time.Millisecond}}, buildOptions{}},
		// A spec without a test takes the image's, and its timings where
		// the spec has none.
		"health-from-image": {backends.ContainerSpec{Name: "a-1", Image: "img", Healthcheck: &backends.Healthcheck{Interval: 2 * time.Second}},
			buildOptions{ImageHealthcheck: &healthConfig{Test: []string{"CMD-SHELL", "check"}, Interval: time.Minute, Retries: 5}}},
		"health-disabled": {backends.ContainerSpec{Name: "a-1", Image: "img", Healthcheck: &backends.Healthcheck{Disabled: true}},
			buildOptions{ImageHealthcheck: &healthConfig{Test: []string{"CMD-SHELL", "check"}}}},
		"network-none": {backends.ContainerSpec{Name: "a-1", Image: "img", Network: backends.NetworkMode{Kind: "none"}, Command: []string{}}, buildOptions{ImageEntrypoint: []string{"/entry"}}},
		"clear-entrypoint": {backends.ContainerSpec{Name: "a-1", Image: "img", Entrypoint: []string{}, Network: backends.NetworkMode{Kind: "container", Container: "xyz"},
			UserNS: backends.NamespaceMode{Kind: "host"}, UTS: backends.NamespaceMode{Kind: "host"}}, buildOptions{}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := buildSpec(c.cs, c.o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "specgen", name+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("SpecGenerator for %s differs from %s:\n%s", name, path, got)
			}
		})
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
}

// Locks down refusals of values podman cannot take: InvalidArgument
// naming the spec field.
func TestBuildSpecInvalid(t *testing.T) {
	for field, mod := range map[string]func(*backends.ContainerSpec){
		"logging.driver":  func(cs *backends.ContainerSpec) { cs.Logging = &spec.Logging{Driver: "syslog"} },
		"ports[0].hostIP": func(cs *backends.ContainerSpec) { cs.Ports = []backends.PortMapping{{HostIP: "x", ContainerPort: 1}} },
		"networks[0].ipv4": func(cs *backends.ContainerSpec) {
			cs.Networks = []backends.NetworkAttachment{{Network: "n", IPv4: "::1"}}
		},
		"mounts[0].propagation": func(cs *backends.ContainerSpec) {
			cs.Binds = []backends.Bind{{Source: "/a", Target: "/b", Propagation: "sideways"}}
		},
		"deviceCgroupRules[0]": func(cs *backends.ContainerSpec) { cs.DeviceCgroupRules = []string{"q 1:1 r"} },
		"securityOpt":          func(cs *backends.ContainerSpec) { cs.Security.WritableCgroups = true },
		"volumes[0].subpath": func(cs *backends.ContainerSpec) {
			cs.Volumes = []backends.VolumeMount{{Name: "v", Target: "/v", Subpath: "../x"}}
		},
		"dns[0]": func(cs *backends.ContainerSpec) { cs.DNS = []string{"not-an-ip"} },
	} {
		cs := backends.ContainerSpec{Name: "a-1", Image: "img"}
		mod(&cs)
		_, err := buildSpec(cs, buildOptions{Mountpoints: map[int]string{0: "/vol"}})
		if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), field) {
			t.Fatalf("%s: want InvalidArgument naming it, got %v", field, err)
		}
	}
}
