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
		// Security round 2: podman's unmask= made /proc/sys writable; options
		// the policy does not know are refused rather than let through.
		{name: "unmask=ALL", app: spec.App{SecurityOpt: []string{"unmask=ALL"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "unmask=/proc/sys", app: spec.App{SecurityOpt: []string{"mask=/proc/acpi", "unmask=/proc/sys"}}, path: "services.web.securityOpt[1]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "unmask:ALL", app: spec.App{SecurityOpt: []string{"unmask:ALL"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "proc-opts", app: spec.App{SecurityOpt: []string{"proc-opts=hidepid=0"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "unknown option", app: spec.App{SecurityOpt: []string{"future-knob=off"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "option with a leading space", app: spec.App{SecurityOpt: []string{" seccomp=unconfined"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "no-new-privileges=False", app: spec.App{SecurityOpt: []string{"no-new-privileges=False"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "no-new-privileges=0", app: spec.App{SecurityOpt: []string{"no-new-privileges=0"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "writable-cgroups=1", app: spec.App{SecurityOpt: []string{"writable-cgroups=1"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "bare disable", app: spec.App{SecurityOpt: []string{"disable"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "label=nested", app: spec.App{SecurityOpt: []string{"label=nested"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "label level range", app: spec.App{SecurityOpt: []string{"label=level:s0-s0:c0.c1023"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "label user", app: spec.App{SecurityOpt: []string{"label=user:system_u"}}, path: "services.web.securityOpt[0]", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "harmless options", app: spec.App{SecurityOpt: []string{"mask=/proc/acpi:/sys/firmware", "no-new-privileges=TRUE", "writable-cgroups=false", "label=level:s0:c100,c200", "seccomp=builtin", "apparmor=docker-default", "no-new-privileges"}}},
		// Log drivers that dial out or use the host's credentials.
		{name: "log driver syslog", app: spec.App{Logging: &spec.Logging{Driver: "syslog", Options: map[string]string{"syslog-address": "tcp://127.0.0.1:514"}}}, path: "services.web.logging.driver", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "log driver gelf", app: spec.App{Logging: &spec.Logging{Driver: "gelf"}}, path: "services.web.logging.driver", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "log driver fluentd", app: spec.App{Logging: &spec.Logging{Driver: "fluentd"}}, path: "services.web.logging.driver", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "log driver awslogs", app: spec.App{Logging: &spec.Logging{Driver: "awslogs"}}, path: "services.web.logging.driver", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "log driver splunk", app: spec.App{Logging: &spec.Logging{Driver: "splunk"}}, path: "services.web.logging.driver", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "log driver plugin", app: spec.App{Logging: &spec.Logging{Driver: "loki:latest"}}, path: "services.web.logging.driver", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "log file at a host path", app: spec.App{Logging: &spec.Logging{Driver: "k8s-file", Options: map[string]string{"path": "/etc/cron.d/x"}}}, path: "services.web.logging.options.path", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "local log drivers", app: spec.App{Logging: &spec.Logging{Driver: "json-file", Options: map[string]string{"max-size": "1m", "max-file": "3"}}}},
		{name: "journald", app: spec.App{Logging: &spec.Logging{Driver: "journald", Options: map[string]string{"tag": "web"}}}},
		{name: "log options only", app: spec.App{Logging: &spec.Logging{Options: map[string]string{"max-size": "1m"}}}},
		{name: "host sysctl", app: spec.App{Sysctls: map[string]string{"kernel.panic": "1"}}, path: "services.web.sysctls.kernel.panic", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "net sysctl with host network", app: spec.App{NetworkMode: "host", Sysctls: map[string]string{"net.ipv4.ip_forward": "1"}}, path: "services.web.sysctls.net.ipv4.ip_forward", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "namespaced sysctls", app: spec.App{Sysctls: map[string]string{"net.core.somaxconn": "1024", "kernel.shmmax": "1", "fs.mqueue.msg_max": "20"}}},
		{name: "bind", app: spec.App{Mounts: []spec.Mount{{Source: "/", Target: "/host"}}}, path: "services.web.mounts[0].source", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "inline volume bind", app: spec.App{Volumes: []spec.VolumeMount{{Target: "/x", DriverOpts: map[string]string{"type": "none", "o": "bind", "device": "/"}}}}, path: "services.web.volumes[0].driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "project volume bind", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"o": "bind", "device": "/etc"}}}, path: "volumes.v.driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "project volume block device", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "ext4", "device": "/dev/vda"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "project volume nfs", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "nfs", "o": "addr=10.0.0.1", "device": ":/export"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "tmpfs volume", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m"}}}},
		{name: "tmpfs volume, device none", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "tmpfs", "device": "none"}}}},
		// Security round 2: a device is host storage whatever the type.
		{name: "tmpfs volume naming a host device", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "tmpfs", "device": "/dev/vda"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "inline tmpfs naming a host device", app: spec.App{Volumes: []spec.VolumeMount{{Target: "/x", DriverOpts: map[string]string{"type": "tmpfs", "device": "/dev/vda"}}}}, path: "services.web.volumes[0].driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "device without a type", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"device": "/dev/vda"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "device spelled Device", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"Type": "ext4", "Device": "/dev/vda"}}}, path: "volumes.v.driverOpts", allow: "CORNUS_ALLOW_PRIVILEGED=1"},
		{name: "podman's type=bind", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "bind", "device": "/etc"}}}, path: "volumes.v.driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "o=rbind", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "ext4", "o": "rbind", "device": "/etc"}}}, path: "volumes.v.driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
		{name: "o=move", vols: map[string]spec.Volume{"v": {DriverOpts: map[string]string{"type": "tmpfs", "o": "move", "device": "/mnt"}}}, path: "volumes.v.driverOpts.device", allow: "CORNUS_ALLOW_BIND_SOURCES"},
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
