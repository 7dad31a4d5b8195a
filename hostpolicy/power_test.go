package hostpolicy

import (
	"errors"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// TestHostPower locks down the hardening issue's list: every host-power
// channel is refused by default with its field and the variable that
// allows it, allowed by that variable, and harmless look-alikes pass.
func TestHostPower(t *testing.T) {
	tru := true
	for _, c := range []struct {
		name  string
		app   spec.App
		vols  map[string]spec.Volume
		path  string // "" = must pass by default
		allow string // the variable that allows it
	}{
		{name: "privileged", app: spec.App{Privileged: true}, path: "services.web.privileged", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "device", app: spec.App{Devices: []spec.Device{{Source: "/dev/vda"}}}, path: "services.web.devices[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "device cgroup rule", app: spec.App{DeviceCgroupRules: []string{"b 253:* rwm"}}, path: "services.web.deviceCgroupRules[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "cap SYS_ADMIN", app: spec.App{CapAdd: []string{"SYS_ADMIN"}}, path: "services.web.capAdd[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "cap_sys_module spelled differently", app: spec.App{CapAdd: []string{"cap_sys_module"}}, path: "services.web.capAdd[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "cap ALL", app: spec.App{CapAdd: []string{"ALL"}}, path: "services.web.capAdd[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "caps PTRACE DAC_READ_SEARCH NET_ADMIN", app: spec.App{CapAdd: []string{"CHOWN", "SYS_PTRACE", "DAC_READ_SEARCH", "NET_ADMIN"}}, path: "services.web.capAdd[3]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "default cap re-added", app: spec.App{CapDrop: []string{"ALL"}, CapAdd: []string{"CHOWN", "NET_BIND_SERVICE"}}},
		{name: "host network", app: spec.App{NetworkMode: "host"}, path: "services.web.networkMode", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "no network", app: spec.App{NetworkMode: "none"}},
		{name: "host pid", app: spec.App{PidMode: "host"}, path: "services.web.pidMode", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "pid of a service", app: spec.App{PidMode: "service:db"}},
		{name: "host ipc", app: spec.App{IpcMode: "host"}, path: "services.web.ipcMode", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "host uts", app: spec.App{UTSMode: "host"}, path: "services.web.utsMode", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "host userns", app: spec.App{UsernsMode: "host"}, path: "services.web.usernsMode", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "host cgroupns", app: spec.App{CgroupnsMode: "host"}, path: "services.web.cgroupnsMode", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "private cgroupns", app: spec.App{CgroupnsMode: "private"}},
		{name: "seccomp=unconfined", app: spec.App{SecurityOpt: []string{"seccomp=unconfined"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "seccomp:unconfined", app: spec.App{SecurityOpt: []string{"seccomp:unconfined"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "custom seccomp profile", app: spec.App{SecurityOpt: []string{`seccomp={"defaultAction":"SCMP_ACT_ALLOW"}`}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "apparmor=unconfined", app: spec.App{SecurityOpt: []string{"apparmor=unconfined"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "label=disable", app: spec.App{SecurityOpt: []string{"label=disable"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "label:type:spc_t", app: spec.App{SecurityOpt: []string{"label:type:spc_t"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "no-new-privileges=false", app: spec.App{SecurityOpt: []string{"no-new-privileges=false"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "systempaths=unconfined", app: spec.App{SecurityOpt: []string{"systempaths=unconfined"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "no-new-privileges:true", app: spec.App{SecurityOpt: []string{"no-new-privileges:true", "label=level:s0:c100"}}},
		{name: "host sysctl", app: spec.App{Sysctls: map[string]string{"kernel.panic": "1"}}, path: "services.web.sysctls.kernel.panic", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "net sysctl with host network", app: spec.App{NetworkMode: "host", Sysctls: map[string]string{"net.ipv4.ip_forward": "1"}}, path: "services.web.sysctls.net.ipv4.ip_forward", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "namespaced sysctls", app: spec.App{Sysctls: map[string]string{"net.core.somaxconn": "1024", "kernel.shmmax": "1", "fs.mqueue.msg_max": "20"}}},
		{name: "bind", app: spec.App{Mounts: []spec.Mount{{Source: "/", Target: "/host"}}}, path: "services.web.mounts[0].source", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "inline volume bind", app: spec.App{Volumes: []spec.VolumeMount{{Target: "/x", DriverOpts: map[string]string{"type": "none", "o": "bind", "device": "/"}}}}, path: "services.web.volumes[0].driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "project volume bind", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"o": "bind", "device": "/etc"}}}, path: "volumes.v.driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "project volume block device", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "ext4", "device": "/dev/vda"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "project volume nfs", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "nfs", "o": "addr=10.0.0.1", "device": ":/export"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "tmpfs volume", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m"}}}},
		{name: "external volume", vols: map[string]spec.Volume{"v": {External: true}}},
		{name: "privileged postCreate hook", app: spec.App{Hooks: &spec.Hooks{PostCreate: []spec.Hook{{Command: []string{"id"}, Privileged: true}}}}, path: "services.web.hooks.postCreate[0].privileged", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "privileged postAttach hook", app: spec.App{Hooks: &spec.Hooks{PostAttach: []spec.Hook{{Command: []string{"id"}}, {Command: []string{"id"}, Privileged: true}}}}, path: "services.web.hooks.postAttach[1].privileged", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "privileged postStart hook", app: spec.App{Hooks: &spec.Hooks{PostStart: []spec.Hook{{Command: []string{"id"}, Privileged: true}}}}, path: "services.web.hooks.postStart[0].privileged", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "privileged preStop hook", app: spec.App{Hooks: &spec.Hooks{PreStop: []spec.Hook{{Command: []string{"id"}, Privileged: true}}}}, path: "services.web.hooks.preStop[0].privileged", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "plain init", app: spec.App{Init: &tru}},
	} {
		t.Run(c.name, func(t *testing.T) {
			proj := project(c.app)
			proj.Volumes = c.vols
			err := Policy{}.Check(proj)
			if c.path == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var d *DeniedError
			if !errors.As(err, &d) {
				t.Fatalf("not refused: %v", err)
			}
			if d.Problems[len(d.Problems)-1].Path != c.path || !strings.Contains(err.Error(), c.allow) {
				t.Fatalf("refusal names %q, want %q and %s:\n%v", d.Problems[len(d.Problems)-1].Path, c.path, c.allow, err)
			}
			allowed := Policy{AllowPrivileged: true}
			if c.allow == EnvAllowBindSources {
				allowed = Policy{BindPrefixes: []string{"/"}}
			}
			if err := allowed.Check(proj); err != nil {
				t.Fatalf("%s did not allow it: %v", c.allow, err)
			}
		})
	}
}

// TestExec: a privileged exec is host power too.
func TestExec(t *testing.T) {
	if err := (Policy{}).CheckExec("services.web.exec", true); err == nil || !strings.Contains(err.Error(), "CORNUS_ALLOW_PRIVILEGED=1") {
		t.Fatalf("privileged exec: %v", err)
	}
	if err := (Policy{AllowPrivileged: true}).CheckExec("x", true); err != nil {
		t.Fatal(err)
	}
}
