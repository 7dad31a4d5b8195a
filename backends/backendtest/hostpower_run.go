package backendtest

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/spec"
)

// runHostPower runs one row of the default-deny table through the engine:
// refused by default with nothing created and nothing dialled, then
// honored (or warned, for a declared gap; or refused by the runtime itself,
// or by a backend with no form for an unportable row) once allowed.
func runHostPower(x *env, c HostPowerCase) {
	h, err := NewHostEnv(x.dir)
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(h.Close)
	p := x.hostPowerProject(h, c)

	deny := engine.New(x.b, engine.WithLockDir(x.t.TempDir())) // no CORNUS_ALLOW_*: default deny
	_, err = deny.Up(x.ctx, p, engine.UpOptions{})
	var d *hostpolicy.DeniedError
	if !errors.As(err, &d) || !errdefs.IsPermissionDenied(err) {
		x.t.Fatalf("default policy: want a host-policy refusal, got %v", err)
	}
	allowVar, _, _ := strings.Cut(c.Allow, "=")
	if !strings.Contains(err.Error(), c.Field) || !strings.Contains(err.Error(), allowVar) {
		x.t.Fatalf("refusal must name %s and %s:\n%v", c.Field, allowVar, err)
	}
	x.assertNothingLeft(x.ctx)
	if n := h.Dialed(); n != 0 {
		x.t.Fatalf("refused, yet %d connections reached the test's listener", n)
	}

	if c.NotDeployedWhy != "" {
		x.t.Logf("allowed phase not run: %s", c.NotDeployedWhy)
		return
	}
	allow := engine.New(x.b, engine.WithLockDir(x.t.TempDir()),
		engine.WithPolicy(hostpolicy.Policy{AllowPrivileged: true, BindPrefixes: []string{x.dir}}))
	gapWarnings := allow.Warnings(p)
	_, err = allow.Up(x.ctx, p, engine.UpOptions{})
	// A runtime may refuse to grant every capability when the host's
	// bounding set lacks some (dockerd does), with its capability error
	// and no other; another grants what the host has (containerd), and
	// then the check below must hold.
	if missing, merr := HostMissingCaps(); err != nil && c.NeedsAllCaps && (merr != nil || len(missing) > 0) && CapabilityRefusal(err.Error()) {
		x.t.Logf("allowed by the policy; the runtime cannot grant every capability on this host (bounding set lacks %v): %v", missing, err)
		return
	}
	if c.RuntimeRefuses {
		if err == nil || errdefs.IsPermissionDenied(err) {
			x.t.Fatalf("allowed: want the runtime's own refusal, got %v", err)
		}
		if n := len(x.containers("app")); n != 0 {
			x.t.Fatalf("the runtime refused, yet %d containers are left", n)
		}
		x.t.Logf("allowed by the policy, refused by the runtime: %v", err)
		return
	}
	if err != nil && c.Unportable != "" && !errdefs.IsPermissionDenied(err) {
		if n := len(x.containers("app")); n != 0 {
			x.t.Fatalf("the backend refused it, yet %d containers are left: %v", n, err)
		}
		x.t.Logf("allowed by the policy; this backend has no form for it (%s): %v", c.Unportable, err)
		return
	}
	if err != nil {
		x.t.Fatalf("allowed by %s: up: %v", c.Allow, err)
	}
	if !x.one("app").Running() {
		x.t.Fatalf("allowed: container %s", x.one("app").State)
	}
	switch {
	case len(gapWarnings) > 0:
		x.t.Logf("declared gap, warned: %v", gapWarnings)
	case c.Check != "":
		if out, code := x.sh("app", h.Expand(c.Check)); code != 0 {
			x.t.Fatalf("allowed, but not honored: %q exited %d: %s", h.Expand(c.Check), code, out)
		}
	case c.Dials:
		for h.Dialed() == 0 {
			select {
			case <-x.ctx.Done():
				x.t.Fatalf("allowed, but the runtime never connected to the test's listener %s", h.Expand("@SINK@"))
			case <-time.After(50 * time.Millisecond):
			}
		}
	default:
		x.t.Logf("runs; honoring not observed: %s", c.NotHonoredWhy)
	}
}

// hostPowerProject is the case's app (a sleeper unless it says otherwise)
// with placeholders filled, in a project of its own.
func (x *env) hostPowerProject(h HostEnv, c HostPowerCase) spec.Project {
	a, vols := h.ExpandApp(c.App, c.Volumes)
	a.Name = "app"
	if a.Command == nil {
		a.Command = sleeper("app").Command
	}
	p := x.proj(a)
	if len(vols) > 0 {
		p.Volumes = map[string]spec.Volume{}
		for key, v := range vols {
			v.Name = x.project + "_" + key
			p.Volumes[key] = v
		}
	}
	return p
}

// engineHealth makes a backend with native healthchecks look like one
// without, so the engine's own prober (used by runtimes that have none) is
// proven on a real daemon: healthchecks never reach the backend.
// It keeps the inner backend's networks and images (the cases need them)
// and declares only those features.
type engineHealth struct {
	backends.Backend
	backends.Networks
	backends.Images
}

func newEngineHealth(b backends.Backend) engineHealth {
	n, _ := backends.Want[backends.Networks](b, backends.FeatureNetworks, "networks")
	i, _ := backends.Want[backends.Images](b, backends.FeatureImages, "images")
	return engineHealth{Backend: b, Networks: n, Images: i}
}

func (e engineHealth) Capabilities() backends.Capabilities {
	c := e.Backend.Capabilities()
	c.NativeHealthcheck = false
	c.Gaps = maps.Clone(c.Gaps)
	c.Features = []backends.Feature{backends.FeatureNetworks, backends.FeatureImages}
	return c
}

func (e engineHealth) Create(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	cs.Healthcheck = &backends.Healthcheck{Disabled: true} // the image may have one too
	return e.Backend.Create(ctx, cs)
}
