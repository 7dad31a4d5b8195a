package backendtest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// part is what a case sets and checks for one field. A declared gap hides
// only its own part: the runner drops the parts whose field is a gap (what
// they set and what they check), deploys and checks the rest, and checks
// each gap's warning on its own.
type part struct {
	// field is the spec path (or field=value) the part exercises.
	field string
	// needs are fields the part cannot be observed without (capAdd is seen
	// only after capDrop ALL); a gap on one of them drops this part too.
	needs []string
	// set adds to the case's draft what the field needs: apps (by name, a
	// sleeper until set changes it), networks, volumes.
	set func(x *env, d *draft)
	// check observes the field honored once the draft is up.
	check func(x *env, p spec.Project)
}

// draft is the project a case builds from its parts.
type draft struct {
	apps     map[string]*spec.App
	networks map[string]spec.Network
	volumes  map[string]spec.Volume
}

func newDraft() *draft {
	return &draft{apps: map[string]*spec.App{}, networks: map[string]spec.Network{}, volumes: map[string]spec.Volume{}}
}

// app returns the draft's app called name, a sleeper when new.
func (d *draft) app(name string) *spec.App {
	if a, ok := d.apps[name]; ok {
		return a
	}
	a := sleeper(name)
	d.apps[name] = &a
	return &a
}

// project is the draft as the case's project; networks and volumes get
// the project's prefix.
func (d *draft) project(x *env) spec.Project {
	var apps []spec.App
	for _, name := range slices.Sorted(maps.Keys(d.apps)) {
		apps = append(apps, spec.DeepCopy(*d.apps[name]))
	}
	p := x.proj(apps...)
	if len(d.networks) > 0 {
		p.Networks = map[string]spec.Network{}
		for k, n := range d.networks {
			n.Name = x.project + "_" + k
			p.Networks[k] = n
		}
	}
	if len(d.volumes) > 0 {
		p.Volumes = map[string]spec.Volume{}
		for k, v := range d.volumes {
			v.Name = x.project + "_" + k
			p.Volumes[k] = v
		}
	}
	return p
}

// partPlan is how a case of parts runs on a backend: the parts deployed
// and checked together, one gap check per declared gap (part field →
// the gap covering it), and the parts not observed for a gap they need.
type partPlan struct {
	honored []part
	gaps    map[string]string
	refused map[string]string
	unseen  []string
}

func planParts(caps backends.Capabilities, parts []part) partPlan {
	plan := partPlan{gaps: map[string]string{}, refused: map[string]string{}}
	checked := map[string]bool{}
	for _, p := range parts {
		if key, ok := caps.RefusedKey(p.field); ok {
			plan.refused[p.field] = key
			continue
		}
		if key, ok := caps.GapKey(p.field); ok {
			if !checked[key] { // a parent's gap is checked once
				checked[key] = true
				plan.gaps[p.field] = key
			}
			continue
		}
		if i := slices.IndexFunc(p.needs, func(f string) bool { _, gap := caps.GapKey(f); return gap }); i >= 0 {
			plan.unseen = append(plan.unseen, p.field+" needs "+p.needs[i])
			continue
		}
		plan.honored = append(plan.honored, p)
	}
	return plan
}

// runParts runs a case made of parts on b: one deployment of the honored
// parts, checked part by part, and one gap check per declared gap.
func runParts(t *testing.T, b backends.Backend, c testCase) {
	plan := planParts(b.Capabilities(), c.parts)
	for _, p := range c.parts {
		if key, ok := plan.gaps[p.field]; ok {
			t.Run("gap "+p.field, func(t *testing.T) {
				t.Parallel()
				newEnv(t, b).runPartGap(p, key)
			})
		}
	}
	for _, p := range c.parts {
		if key, ok := plan.refused[p.field]; ok {
			t.Run("refused "+p.field, func(t *testing.T) {
				t.Parallel()
				newEnv(t, b).runPartRefused(p, key)
			})
		}
	}
	for _, u := range plan.unseen {
		t.Logf("not observed: %s, a declared gap", u)
	}
	honored := plan.honored
	if len(honored) == 0 {
		return
	}
	x := newEnv(t, b)
	d := newDraft()
	for _, p := range honored {
		p.set(x, d)
	}
	proj := d.project(x)
	// What the runner dropped is dropped: nothing the case sets warns.
	for _, w := range x.e.Warnings(proj) {
		for _, p := range c.parts {
			if related(w.Field, p.field) {
				x.t.Fatalf("with the gapped parts dropped, the case still sets a gapped field: %s (set it in its own part)", w)
			}
		}
	}
	x.up(proj)
	for _, p := range honored {
		x.t.Logf("checking %s", p.field)
		p.check(x, proj)
	}
}

// runPartGap deploys one part whose field is the declared gap key and
// asserts exactly its warning, the app it warns about running (the
// sleeper's command in place of the part's) and the rest of its spec
// served: a declared gap is a reviewed decision, not a skipped case.
func (x *env) runPartGap(p part, key string) {
	d := newDraft()
	p.set(x, d)
	ws := x.e.Warnings(d.project(x))
	if len(ws) != 1 || ws[0].Field != key {
		x.t.Fatalf("declared gap %q: want exactly its warning, got %v", key, ws)
	}
	a := d.app(ws[0].Service)
	a.Command, a.Entrypoint = sleeper(a.Name).Command, nil
	a.Env = map[string]string{"CONTRACT_REST": "served"}
	x.up(d.project(x))
	if c := x.one(a.Name); !c.Running() {
		x.t.Fatalf("with the %q gap the container is %s, want running", key, c.State)
	}
	if out := x.mustSh(a.Name, "echo $CONTRACT_REST"); out != "served" {
		x.t.Fatalf("with the %q gap the rest of the spec is not served: env %q", key, out)
	}
	x.t.Logf("gap %s: warned as declared (%s), container runs", key, ws[0].Message)
}

// runPartRefused deploys one part whose field the backend declares it
// refuses: up must fail saying not implemented and naming the field.
func (x *env) runPartRefused(p part, key string) {
	d := newDraft()
	p.set(x, d)
	proj := d.project(x)
	if err := proj.Validate(); err != nil {
		x.t.Fatalf("invalid test spec: %v", err)
	}
	field, _, _ := strings.Cut(key, "=")
	_, err := x.e.Up(x.ctx, proj, engine.UpOptions{})
	if err == nil || !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), field) {
		x.t.Fatalf("declared refusal %q: up = %v, want a not-implemented error naming %s", key, err, field)
	}
	if cs, err := x.e.PS(x.ctx, proj.Name, engine.PSOptions{All: true}); err != nil || len(cs) > 0 {
		x.t.Fatalf("declared refusal %q: up left %d containers (%v); it must refuse before making any", key, len(cs), err)
	}
	x.t.Logf("refused %s as declared (%s): %v", key, x.e.Backend().Capabilities().Refused[key], err)
}

// related reports whether two spec paths name the same field, one under
// the other, or a value of the other.
func related(a, b string) bool {
	under := func(x, y string) bool { return strings.HasPrefix(x, y+".") || strings.HasPrefix(x, y+"=") }
	return a == b || under(a, b) || under(b, a)
}
