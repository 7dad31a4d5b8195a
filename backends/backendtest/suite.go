package backendtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/spec"
)

// Image is the reference the suite loads into every backend.
const Image = "cornus-test/busybox:2"

// Open connects to the backend under test; the suite closes it.
type Open func(t *testing.T) backends.Backend

// Run runs every contract case against the backend open returns: the
// floor check, each case (a declared gap still deploys, asserting the
// warning and a running container; in a case made of parts it drops only
// its part), the host-power table and, for
// backends with native healthchecks, the engine-run healthcheck path.
func Run(t *testing.T, open Open) {
	b := open(t)
	t.Cleanup(func() { _ = b.Close() })
	t.Run("floor", func(t *testing.T) { checkFloor(t, b.Name(), b.Capabilities()) })
	t.Run("features", func(t *testing.T) { checkFeatures(t, b) })
	LoadImage(t, b)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if len(c.parts) > 0 {
				runParts(t, b, c)
				return
			}
			x := newEnv(t, b)
			if gap := x.gapOf(c.fields); gap != "" {
				x.runGapCase(c, gap)
				return
			}
			c.run(x)
		})
	}
	t.Run("feature behaviour", func(t *testing.T) { runFeatureCases(t, b) })
	t.Run("build", func(t *testing.T) {
		t.Parallel()
		runBuildCase(t, b)
	})
	t.Run("host power", func(t *testing.T) {
		for _, c := range HostPowerCases {
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				runHostPower(newEnv(t, b), c)
			})
		}
	})
	if b.Capabilities().NativeHealthcheck {
		t.Run("engine-run healthchecks", func(t *testing.T) {
			eb := newEngineHealth(b)
			for _, c := range cases {
				if !slices.Contains(c.fields, "healthcheck") {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(newEnv(t, eb))
				})
			}
		})
	}
}

// LoadImage builds the busybox test image (Image) locally and loads it
// unless the backend has it: no pulls. Backends' own daemon tests use it
// too, so every test sees the same image under that reference.
func LoadImage(t *testing.T, b backends.Backend) {
	t.Helper()
	ctx := context.Background()
	images, err := backends.Want[backends.Images](b, backends.FeatureImages, "loading the test image")
	if err != nil {
		t.Fatalf("%v: the suite needs a way to bring in its image", err)
	}
	if _, err := images.InspectImage(ctx, Image); err == nil {
		return
	}
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: Image, UDPSink: true}); err != nil {
		t.Fatalf("build test image: %v", err)
	}
	refs, err := images.LoadImage(ctx, &buf)
	if err != nil {
		t.Fatalf("load test image: %v", err)
	}
	if !contains(refs, Image) && !contains(refs, "docker.io/"+Image) {
		t.Fatalf("LoadImage returned %v, want %s among them", refs, Image)
	}
}

// env is one case's world: a unique project on the shared backend.
type env struct {
	t       *testing.T
	ctx     context.Context
	b       backends.Backend
	e       *engine.Engine
	project string
	dir     string // a host directory the case may bind-mount
	// built are images the case built, removed after its containers:
	// each rebuild under a tag leaves the one before untagged.
	built []string
}

func newEnv(t *testing.T, b backends.Backend) *env {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "ct" + hex.EncodeToString(suffix)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	x := &env{
		t: t, ctx: ctx, b: b, project: name, dir: dir,
		e: engine.New(b, engine.WithPolicy(hostpolicy.Policy{BindPrefixes: []string{dir}}), engine.WithLockDir(t.TempDir())),
	}
	t.Cleanup(func() {
		// Remove everything the case made, even when it failed; a
		// generous bound, for a daemon slowed by a loaded machine.
		dctx, dcancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer dcancel()
		if err := x.e.Down(dctx, name, engine.DownOptions{Volumes: true}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		x.assertNothingLeft(dctx)
		x.removeBuilt(dctx)
		cancel()
	})
	return x
}

// removeBuilt removes the images the case built (by ID, tag or not).
func (x *env) removeBuilt(ctx context.Context) {
	images, err := backends.Want[backends.Images](x.b, backends.FeatureImages, "images")
	if err != nil || len(x.built) == 0 {
		return
	}
	for _, ref := range slices.Compact(slices.Sorted(slices.Values(x.built))) {
		if err := images.RemoveImage(ctx, ref, true); err != nil && !errdefs.IsNotFound(err) {
			x.t.Errorf("cleanup: remove built image %s: %v", ref, err)
		}
	}
}

// proj builds a one-or-more-app project with the suite's image filled in.
func (x *env) proj(apps ...spec.App) spec.Project {
	p := spec.Project{Name: x.project, Services: map[string]spec.App{}}
	for _, a := range apps {
		if a.Image == "" {
			a.Image = Image
		}
		p.Services[a.Name] = a
	}
	return p.Normalize()
}

// up applies p and fails the test on error.
func (x *env) up(p spec.Project, o ...engine.UpOptions) {
	x.t.Helper()
	var opts engine.UpOptions
	if len(o) > 0 {
		opts = o[0]
	}
	if err := p.Validate(); err != nil {
		x.t.Fatalf("invalid test spec: %v", err)
	}
	if _, err := x.e.Up(x.ctx, p, opts); err != nil {
		x.t.Fatalf("up: %v", err)
	}
}

// containers lists an app's containers (all states).
func (x *env) containers(app string) []backends.Container {
	x.t.Helper()
	cs, err := x.b.List(x.ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: x.project, backends.ComposeService: app}, All: true})
	if err != nil {
		x.t.Fatalf("list: %v", err)
	}
	return cs
}

func (x *env) one(app string) backends.Container {
	x.t.Helper()
	cs := x.containers(app)
	if len(cs) != 1 {
		x.t.Fatalf("%s has %d containers, want 1", app, len(cs))
	}
	return cs[0]
}

// sh runs a shell command in the app's first replica: stdout+stderr, code.
func (x *env) sh(app, script string) (string, int) {
	x.t.Helper()
	var out bytes.Buffer
	code, err := x.b.Exec(x.ctx, x.one(app).ID, backends.ExecOptions{Cmd: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out})
	if err != nil {
		x.t.Fatalf("exec %q in %s: %v", script, app, err)
	}
	return strings.TrimSpace(out.String()), code
}

// mustSh runs a command that must succeed and returns its output.
func (x *env) mustSh(app, script string) string {
	x.t.Helper()
	out, code := x.sh(app, script)
	if code != 0 {
		x.t.Fatalf("%q in %s exited %d: %s", script, app, code, out)
	}
	return out
}

// eventually retries check until it returns "" or 30 s have passed.
func (x *env) eventually(what string, check func() string) {
	x.t.Helper()
	x.eventuallyWithin(30*time.Second, what, check)
}

// assertNothingLeft checks no container, network or volume of the project
// remains.
func (x *env) assertNothingLeft(ctx context.Context) {
	sel := backends.ListOptions{Labels: map[string]string{backends.ComposeProject: x.project}, All: true}
	if cs, err := x.b.List(ctx, sel); err == nil && len(cs) > 0 {
		x.t.Errorf("containers left behind: %d", len(cs))
	}
	if ns, err := x.networks().ListNetworks(ctx, sel); err == nil && len(ns) > 0 {
		x.t.Errorf("networks left behind: %d", len(ns))
	}
	if vs, err := x.b.ListVolumes(ctx, sel); err == nil && len(vs) > 0 {
		x.t.Errorf("volumes left behind: %d", len(vs))
	}
}

func (x *env) gapOf(fields []string) string {
	caps := x.b.Capabilities()
	for _, f := range fields {
		if _, ok := caps.Gap(f); ok {
			return f
		}
	}
	return ""
}

// runGapCase deploys a one-field case's sample with the gap field set and asserts
// exactly the declared warning, a running container, and the rest of the
// spec served (an environment variable and exec): a declared gap is a
// reviewed decision, not a skipped case.
func (x *env) runGapCase(c testCase, gap string) {
	if c.sample == nil {
		x.t.Fatalf("case %s has no sample app to deploy with the %q gap", c.name, gap)
	}
	a := c.sample(x)
	if a.Command == nil {
		a.Command = sleeper(a.Name).Command
	}
	a.Env = map[string]string{"CONTRACT_REST": "served"}
	p := x.proj(a)
	ws := x.e.Warnings(p)
	if len(ws) != 1 || ws[0].Service != a.Name || (ws[0].Field != gap && !strings.HasPrefix(gap, ws[0].Field+".") && !strings.HasPrefix(ws[0].Field, gap+".")) {
		x.t.Fatalf("declared gap %q: want exactly its warning, got %v", gap, ws)
	}
	x.up(p)
	if c := x.one(a.Name); !c.Running() {
		x.t.Fatalf("with the %q gap the container is %s, want running", gap, c.State)
	}
	if out := x.mustSh(a.Name, "echo $CONTRACT_REST"); out != "served" {
		x.t.Fatalf("with the %q gap the rest of the spec is not served: env %q", gap, out)
	}
	x.t.Logf("gap %s: warned as declared (%s), container runs", gap, ws[0].Message)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// writeFile puts a file in the case's host directory.
func (x *env) writeFile(name, content string) string {
	x.t.Helper()
	p := filepath.Join(x.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		x.t.Fatal(err)
	}
	return p
}

func sleeper(name string) spec.App {
	return spec.App{Name: name, Command: spec.Command{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"}}
}

func errf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// images is the backend's image store; a case that needs one is skipped
// when the backend declares none.
func (x *env) images() backends.Images {
	x.t.Helper()
	i, err := backends.Want[backends.Images](x.b, backends.FeatureImages, "images")
	if err != nil {
		x.t.Skip(err)
	}
	return i
}

// networks is the backend's network management (a floor field: every
// backend must declare it).
func (x *env) networks() backends.Networks {
	x.t.Helper()
	n, err := backends.Want[backends.Networks](x.b, backends.FeatureNetworks, "networks")
	if err != nil {
		x.t.Fatalf("%v: networks are on the floor", err)
	}
	return n
}
