package createbody

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"

	"github.com/cornus-dev/cornus/spec"
)

func decodeCreate(t *testing.T, body string) container.CreateRequest {
	t.Helper()
	var r container.CreateRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCreateDockerRun maps what `docker run -d -p ... -v ... --rm -e` sends.
func TestCreateDockerRun(t *testing.T) {
	req := decodeCreate(t, `{
  "Image": "busybox", "Cmd": ["httpd", "-f"], "Env": ["A=1", "UNSET"], "Entrypoint": [""],
  "ExposedPorts": {"80/tcp": {}}, "Tty": true, "OpenStdin": true, "StdinOnce": true, "StopTimeout": 3,
  "Healthcheck": {"Test": ["CMD", "true"], "Interval": 2000000000, "Retries": 4},
  "HostConfig": {
    "NetworkMode": "default", "PortBindings": {"80/tcp": [{"HostIp": "127.0.0.1", "HostPort": "8080"}], "53/udp": [{"HostPort": "5353-5360"}]},
    "Binds": ["/srv/html:/usr/share/html:ro", "cache:/cache:nocopy"], "Tmpfs": {"/run": "size=64m,mode=1777"},
    "RestartPolicy": {"Name": "on-failure", "MaximumRetryCount": 3}, "Memory": 67108864, "NanoCpus": 500000000,
    "PidsLimit": 100, "CapAdd": ["NET_ADMIN"], "Dns": ["1.1.1.1"], "ExtraHosts": ["db:10.0.0.2"],
    "Ulimits": [{"Name": "nofile", "Soft": 1024, "Hard": 2048}], "CpuShares": 512, "Init": true, "AutoRemove": true
  },
  "NetworkingConfig": {"EndpointsConfig": {"default": {}}}
}`)
	cs, warns, err := ToApp(Input{Req: req, Name: "web1", Networks: map[string]string{"bridge": "bridge"}})
	if err != nil {
		t.Fatal(err)
	}
	a := cs.App
	if a.Name != "web1" || a.Image != "busybox" || !reflect.DeepEqual(a.Command, spec.Command{"httpd", "-f"}) || a.Entrypoint == nil || len(a.Entrypoint) != 0 {
		t.Errorf("identity/argv: %+v", a)
	}
	if !reflect.DeepEqual(a.Env, map[string]string{"A": "1"}) || !a.TTY || !a.StdinOpen || !cs.StdinOnce || a.StopGracePeriod.Std().Seconds() != 3 {
		t.Errorf("process: env %v tty %v stdin %v once %v grace %v", a.Env, a.TTY, a.StdinOpen, cs.StdinOnce, a.StopGracePeriod)
	}
	wantPorts := []spec.Port{{Container: 53, Protocol: "udp", Host: 5353, HostEnd: 5360}, {Container: 80, Protocol: "tcp", HostIP: "127.0.0.1", Host: 8080}}
	if !reflect.DeepEqual(a.Ports, wantPorts) {
		t.Errorf("ports %+v", a.Ports)
	}
	if !reflect.DeepEqual(a.Mounts, []spec.Mount{{Source: "/srv/html", Target: "/usr/share/html", ReadOnly: true, CreateHostPath: true}}) ||
		!reflect.DeepEqual(a.Volumes, []spec.VolumeMount{{Source: "cache", Target: "/cache", NoCopy: true}}) ||
		!reflect.DeepEqual(a.Tmpfs, []spec.Tmpfs{{Target: "/run", Size: 64 << 20, Mode: 0o1777}}) {
		t.Errorf("storage: %+v %+v %+v", a.Mounts, a.Volumes, a.Tmpfs)
	}
	if cs.Volumes["cache"].Name != "cache" {
		t.Errorf("named volume not declared: %+v", cs.Volumes)
	}
	if a.Restart != "on-failure:3" || a.Resources.Limits.Memory != 64<<20 || a.Resources.Limits.CPUs != 0.5 || a.Resources.Limits.Pids != 100 {
		t.Errorf("restart/resources: %q %+v", a.Restart, a.Resources.Limits)
	}
	if a.Healthcheck.Interval.Std().Seconds() != 2 || *a.Healthcheck.Retries != 4 || a.Init == nil || !*a.Init {
		t.Errorf("health/init: %+v", a.Healthcheck)
	}
	if a.NetworkMode != "bridge" || len(a.Networks) != 0 {
		t.Errorf("default network: mode %q nets %+v", a.NetworkMode, a.Networks)
	}
	if a.ExtraHosts["db"][0] != "10.0.0.2" || a.DNS[0] != "1.1.1.1" || a.Ulimits["nofile"] != (spec.Ulimit{Soft: 1024, Hard: 2048}) {
		t.Errorf("hosts/dns/ulimits: %v %v %v", a.ExtraHosts, a.DNS, a.Ulimits)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "CpuShares") {
		t.Errorf("warnings %v, want one naming CpuShares", warns)
	}
}

// TestCreateCompose maps docker compose's request: a project network with
// aliases, and its labels identifying cornus's project, app and replica.
func TestCreateCompose(t *testing.T) {
	req := decodeCreate(t, `{
  "Image": "busybox", "Labels": {"com.docker.compose.project": "shop", "com.docker.compose.service": "api",
    "com.docker.compose.container-number": "2", "com.docker.compose.oneoff": "False"},
  "HostConfig": {"NetworkMode": "shop_back"},
  "NetworkingConfig": {"EndpointsConfig": {"shop_back": {"Aliases": ["shop-api-2", "api"], "IPAMConfig": {"IPv4Address": "172.30.0.5"}}}}
}`)
	cs, _, err := ToApp(Input{Req: req, Name: "shop-api-2", Networks: map[string]string{"shop_back": "shop_back", "abc123": "shop_back"}})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Project != "shop" || cs.App.Name != "api" || cs.Replica != 2 || cs.Labels["cornus.app"] != "api" || cs.Labels["cornus.oneoff"] != "" {
		t.Errorf("identity: project %q app %q replica %d labels %v", cs.Project, cs.App.Name, cs.Replica, cs.Labels)
	}
	want := []spec.NetworkAttachment{{Name: "shop_back", Aliases: []string{"shop-api-2", "api"}, IPv4: "172.30.0.5"}}
	if !reflect.DeepEqual(cs.App.Networks, want) || cs.Networks["shop_back"].Name != "shop_back" {
		t.Errorf("networks %+v %+v", cs.App.Networks, cs.Networks)
	}
	if _, _, err := ToApp(Input{Req: decodeCreate(t, `{"Image":"b","HostConfig":{"NetworkMode":"nope"}}`), Name: "x"}); err == nil || !strings.Contains(err.Error(), "network nope not found") {
		t.Errorf("unknown network: %v", err)
	}
	if _, _, err := ToApp(Input{Req: decodeCreate(t, `{"Image":"b","HostConfig":{"NetworkMode":"host"},"NetworkingConfig":{"EndpointsConfig":{"shop_back":{}}}}`), Name: "x", Networks: map[string]string{"shop_back": "shop_back"}}); err == nil {
		t.Error("host mode combined with a network was accepted")
	}
}

// TestCreateNetworkModes: none, host and container:X are honored as asked
// (the hardening issue found them silently turned into the default bridge).
func TestCreateNetworkModes(t *testing.T) {
	for _, mode := range []string{"none", "host", "container:abc123"} {
		req := decodeCreate(t, `{"Image": "busybox", "HostConfig": {"NetworkMode": "`+mode+`"}, "NetworkingConfig": {"EndpointsConfig": {"`+mode+`": {}}}}`)
		cs, _, err := ToApp(Input{Req: req, Name: "c", Networks: map[string]string{"bridge": "bridge"}})
		if err != nil {
			t.Fatal(err)
		}
		if cs.App.NetworkMode != mode || len(cs.App.Networks) != 0 {
			t.Errorf("%s: networkMode %q networks %v", mode, cs.App.NetworkMode, cs.App.Networks)
		}
	}
	req := decodeCreate(t, `{"Image": "busybox", "NetworkDisabled": true}`)
	if cs, _, err := ToApp(Input{Req: req, Name: "c"}); err != nil || cs.App.NetworkMode != "none" {
		t.Errorf("NetworkDisabled: %q %v", cs.App.NetworkMode, err)
	}
}

// TestCreateHostPowerFields: every host-power field reaches the spec (and
// so the host policy); none is dropped before the check.
func TestCreateHostPowerFields(t *testing.T) {
	req := decodeCreate(t, `{"Image": "busybox", "HostConfig": {
  "UTSMode": "host", "UsernsMode": "host", "CgroupnsMode": "host", "PidMode": "host", "IpcMode": "host",
  "DeviceCgroupRules": ["c 1:3 mr"], "Devices": [{"PathOnHost": "/dev/vda", "PathInContainer": "/dev/vda", "CgroupPermissions": "rwm"}],
  "SecurityOpt": ["seccomp=unconfined"], "CapAdd": ["SYS_ADMIN"],
  "Mounts": [{"Type": "volume", "Source": "hostroot", "Target": "/h", "VolumeOptions": {"DriverConfig": {"Name": "local", "Options": {"type": "none", "o": "bind", "device": "/"}}}}]
}}`)
	cs, warns, err := ToApp(Input{Req: req, Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	a := cs.App
	if a.UTSMode != "host" || a.UsernsMode != "host" || a.CgroupnsMode != "host" || a.PidMode != "host" || a.IpcMode != "host" ||
		len(a.DeviceCgroupRules) != 1 || len(a.Devices) != 1 || len(a.SecurityOpt) != 1 || len(a.CapAdd) != 1 {
		t.Errorf("host power dropped: %+v", a)
	}
	if v := cs.Volumes["hostroot"]; v.DriverOpts["device"] != "/" {
		t.Errorf("inline driver options of a named volume dropped: %+v", cs.Volumes)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
}
