package caretaker

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// fakeBackend is what Attach asks of a backend: its name, capabilities and
// the shared volume (anything else panics).
type fakeBackend struct {
	backends.Backend
	caps backends.Capabilities
	// squatted: the shared volume's name is another project's volume.
	squatted bool
	// onDisk: the shared volume exists without the options asked for.
	onDisk bool
}

func (f *fakeBackend) Name() string                        { return "fake" }
func (f *fakeBackend) Capabilities() backends.Capabilities { return f.caps }
func (f *fakeBackend) EnsureVolume(_ context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	labels := maps.Clone(v.Labels)
	if labels == nil || f.squatted {
		labels = map[string]string{}
	}
	if f.squatted {
		labels[backends.ComposeProject] = "other"
	}
	labels[backends.ComposeProject], labels[backends.ComposeVolume] = cmp.Or(labels[backends.ComposeProject], v.Project), v.Key
	opts := v.Volume.DriverOpts
	if f.onDisk {
		opts = nil
	}
	return backends.Volume{Name: v.Key, Mountpoint: "/var/lib/fake/" + v.Key, Labels: labels, Options: opts}, nil
}
func (f *fakeBackend) RemoveVolume(context.Context, string, bool) error { return nil }

func companions(sidecars, remote bool) *Companions {
	c := &Companions{Backend: &fakeBackend{caps: backends.Capabilities{Sidecars: sidecars}}, Environ: []string{EnvAgentImage + "=agent:test"}}
	if remote {
		c.Remote, c.Server = true, "http://10.0.0.1:8080"
	}
	return c
}

func withMounts(a spec.App) spec.App {
	a.Labels = map[string]string{LabelLocalMounts: EncodeAppMounts([]AppMount{{Index: 0, Target: "/work"}})}
	return a
}

// TestCompanionPrivileges: a companion holds only what its roles need —
// no capability but NET_ADMIN for transparent egress and SYS_ADMIN (with
// /dev/fuse, AppArmor unconfined) for client-local mounts, a read-only
// root and no-new-privileges; privileged only as a Kubernetes sidecar
// that mounts (Bidirectional propagation). A transparent-mode app loses
// CAP_NET_RAW and CAP_NET_ADMIN.
func TestCompanionPrivileges(t *testing.T) {
	proxy := &spec.Egress{Mode: spec.EgressProxy, Default: "cluster"}
	transparent := &spec.Egress{Mode: spec.EgressTransparent, Default: "cluster"}
	nnp := []string{"no-new-privileges:true"}
	fileCred := []spec.Credential{{Name: "tok"}}
	awsCred := []spec.Credential{{Name: "aws", Deliver: spec.DeliverAWS}}
	for _, tc := range []struct {
		name             string
		c                *Companions
		app              spec.App
		capAdd, appDrop  []string
		secOpt           []string
		fuse, privileged bool
		writableRoot     bool
	}{
		{name: "local, proxy egress", c: companions(false, false), app: spec.App{Name: "web", Egress: proxy}, secOpt: nnp},
		{name: "local, transparent egress", c: companions(false, false), app: spec.App{Name: "web", Egress: transparent},
			capAdd: []string{"NET_ADMIN"}, appDrop: []string{"NET_ADMIN", "NET_RAW"}, secOpt: nnp},
		{name: "remote, no mounts", c: companions(false, true), app: spec.App{Name: "web"}, secOpt: nnp},
		{name: "remote, mounts", c: companions(false, true), app: withMounts(spec.App{Name: "web"}),
			capAdd: []string{"SYS_ADMIN"}, secOpt: []string{"no-new-privileges:true", "apparmor=unconfined"}, fuse: true},
		{name: "remote, mounts and transparent egress", c: companions(false, true), app: withMounts(spec.App{Name: "web", Egress: transparent}),
			capAdd: []string{"NET_ADMIN", "SYS_ADMIN"}, appDrop: []string{"NET_ADMIN", "NET_RAW"}, secOpt: []string{"no-new-privileges:true", "apparmor=unconfined"}, fuse: true},
		{name: "remote, file credential", c: companions(false, true), app: spec.App{Name: "web", Credentials: fileCred},
			capAdd: []string{"SYS_ADMIN"}, secOpt: []string{"no-new-privileges:true", "apparmor=unconfined"}},
		{name: "remote, aws credential", c: companions(false, true), app: spec.App{Name: "web", Credentials: awsCred}, secOpt: nnp},
		{name: "remote, mounts and file credential", c: companions(false, true), app: withMounts(spec.App{Name: "web", Credentials: fileCred}),
			capAdd: []string{"SYS_ADMIN"}, secOpt: []string{"no-new-privileges:true", "apparmor=unconfined"}, fuse: true},
		{name: "sidecar, remote, no mounts", c: companions(true, true), app: spec.App{Name: "web"}, secOpt: nnp},
		{name: "sidecar, transparent egress", c: companions(true, false), app: spec.App{Name: "web", Egress: transparent},
			capAdd: []string{"NET_ADMIN"}, appDrop: []string{"NET_ADMIN", "NET_RAW"}, secOpt: nnp},
		{name: "sidecar, remote, mounts", c: companions(true, true), app: withMounts(spec.App{Name: "web"}), privileged: true, writableRoot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			att, ok, err := tc.c.Attach(context.Background(), spec.Project{Name: "p"}, tc.app, 1)
			if err != nil || !ok {
				t.Fatalf("Attach: %v %v", ok, err)
			}
			comp := att.Companion
			if comp.Privileged != tc.privileged {
				t.Errorf("privileged %v, want %v", comp.Privileged, tc.privileged)
			}
			wantDrop := []string{"ALL"}
			if tc.privileged {
				wantDrop = nil
			}
			if !slices.Equal(comp.CapDrop, wantDrop) || !slices.Equal(comp.CapAdd, tc.capAdd) {
				t.Errorf("capDrop %v capAdd %v, want %v and %v", comp.CapDrop, comp.CapAdd, wantDrop, tc.capAdd)
			}
			if !slices.Equal(comp.SecurityOpt, tc.secOpt) {
				t.Errorf("securityOpt %v, want %v", comp.SecurityOpt, tc.secOpt)
			}
			if comp.ReadOnly == tc.writableRoot {
				t.Errorf("readOnly %v, want %v", comp.ReadOnly, !tc.writableRoot)
			}
			if fuse := len(comp.Devices) > 0; fuse != tc.fuse {
				t.Errorf("devices %v, want /dev/fuse: %v", comp.Devices, tc.fuse)
			}
			if !slices.Equal(att.AppCapDrop, tc.appDrop) {
				t.Errorf("the app's capDrop %v, want %v", att.AppCapDrop, tc.appDrop)
			}
		})
	}
}

// TestTransparentRefusesBypass: a transparent-mode app that asks for what
// would take it past the redirect is refused, naming the field and why;
// where the backend has no egress (a declared gap) nothing is enforced
// and nothing refused.
func TestTransparentRefusesBypass(t *testing.T) {
	transparent := &spec.Egress{Mode: spec.EgressTransparent, Default: "deny"}
	for _, tc := range []struct {
		app  spec.App
		want string
	}{
		{spec.App{Name: "web", Egress: transparent, CapAdd: []string{"CHOWN", "NET_RAW"}}, "services.web.capAdd[1]: NET_RAW"},
		{spec.App{Name: "web", Egress: transparent, CapAdd: []string{"cap_net_admin"}}, "services.web.capAdd[0]: cap_net_admin"},
		{spec.App{Name: "web", Egress: transparent, CapAdd: []string{"ALL"}}, "services.web.capAdd[0]: ALL"},
		{spec.App{Name: "web", Egress: transparent, Privileged: true}, "services.web.privileged"},
	} {
		_, _, err := companions(false, false).Attach(context.Background(), spec.Project{Name: "p"}, tc.app, 1)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "SO_MARK") ||
			!strings.Contains(err.Error(), "egress mode proxy") || !errdefs.IsInvalidArgument(err) {
			t.Errorf("%+v: %v, want it refused: %s ...", tc.app, err, tc.want)
		}
	}
	for _, a := range []spec.App{
		{Name: "web", Egress: transparent, CapAdd: []string{"NET_BIND_SERVICE"}},
		{Name: "web", Egress: &spec.Egress{Mode: spec.EgressProxy, Default: "deny"}, CapAdd: []string{"NET_RAW"}},
	} {
		if _, _, err := companions(false, false).Attach(context.Background(), spec.Project{Name: "p"}, a, 1); err != nil {
			t.Errorf("%+v: %v", a, err)
		}
	}
	gap := &Companions{Backend: &fakeBackend{caps: backends.Capabilities{Gaps: map[string]string{"egress": "not here"}}}}
	if _, ok, err := gap.Attach(context.Background(), spec.Project{Name: "p"}, spec.App{Name: "web", Egress: transparent, Privileged: true}, 1); ok || err != nil {
		t.Errorf("egress a declared gap: %v %v, want no companion and no refusal", ok, err)
	}
}

// Security round 2, item 6 (remote mode): the app binds a single file from
// the companion's pin (a bind of that inode), never from its path in the
// mount, which the runtime would resolve on its host and follow if the
// client made it a symlink; the companion is told which file to pin.
func TestSingleFileBindsThePin(t *testing.T) {
	a := spec.App{Name: "web", Labels: map[string]string{LabelLocalMounts: EncodeAppMounts([]AppMount{
		{Index: 0, Target: "/work"}, {Index: 2, Target: "/etc/one.conf", File: "one.conf", ReadOnly: true}, {Index: 2, Target: "/etc/again.conf", File: "one.conf"},
	})}}
	att, _, err := companions(false, true).Attach(context.Background(), spec.Project{Name: "p"}, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	vol := "/var/lib/fake/cornus-caretaker-web-1"
	src := map[string]string{}
	for _, m := range att.AppMounts {
		src[m.Target] = m.Source
	}
	if src["/work"] != vol+"/mounts/0" || src["/etc/one.conf"] != vol+"/pins/2-one.conf" || src["/etc/again.conf"] != vol+"/pins/2-one.conf" {
		t.Errorf("the app's bind sources: %v", src)
	}
	c, err := Parse(att.Companion.Env[EnvConfig])
	if err != nil || !slices.Equal(c.Mounts, []Mount{{Index: 0}, {Index: 2, ReadOnly: true, File: "one.conf"}}) {
		t.Errorf("the companion's mounts: %+v %v", c.Mounts, err)
	}
}

// A mounts-only remote mode (bare's): a companion only for replicas with
// client-local mounts or credentials, which neither dials nor serves
// agents; egress still gets its own.
func TestMountsOnlyRemote(t *testing.T) {
	c := companions(false, true)
	c.MountsOnly = true
	ctx := context.Background()
	for _, tc := range []struct {
		app       spec.App
		companion bool
	}{
		{spec.App{Name: "web"}, false},
		{withMounts(spec.App{Name: "web"}), true},
		{spec.App{Name: "web", Credentials: []spec.Credential{{Name: "tok"}}}, true},
		{spec.App{Name: "web", Docker: true}, true},
		{spec.App{Name: "web", Egress: &spec.Egress{Mode: spec.EgressProxy, Default: "cluster"}}, true},
	} {
		att, ok, err := c.Attach(ctx, spec.Project{Name: "p"}, tc.app, 1)
		if err != nil || ok != tc.companion {
			t.Errorf("%+v: companion %v (%v), want %v", tc.app, ok, err, tc.companion)
			continue
		}
		if !ok {
			continue
		}
		cfg, err := Parse(att.Companion.Env[EnvConfig])
		if err != nil || cfg.Remote {
			t.Errorf("%+v: the portforward and agent roles on (%v)", tc.app, err)
		}
	}
}
