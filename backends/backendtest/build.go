package backendtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
	bkclient "github.com/moby/buildkit/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/spec"
)

// buildDockerfile builds FROM the suite's image, which exists only in the
// backend's store (no registry is reachable): a base must resolve there.
// The RUN step reads a context file, so an edit of it must reach the image
// and an unchanged context must hit the cache.
const buildDockerfile = `FROM ` + Image + `
COPY msg.txt /msg.txt
RUN echo "built $(cat /msg.txt)" > /built.txt
`

// runBuildCase is the contract's build case (issue 24): build, run,
// rebuild after an edit shows the change, and an unchanged rebuild hits
// the cache; all against the backend's own store, offline.
func runBuildCase(t *testing.T, b backends.Backend) {
	x := newEnv(t, b)
	dir := t.TempDir()
	// Each run's own content: the runtime's build cache outlives tests.
	one, two := x.project+"-one", x.project+"-two"
	writeContext(t, dir, one)
	app := sleeper("app")
	app.Image = x.project + "-app"
	app.Build = &spec.Build{Context: dir}
	p := x.proj(app)
	bx := builder.New(b, nil)
	t.Cleanup(func() { _ = bx.Close() })

	first, _, err := x.build(bx, p)
	if why, gap := b.Capabilities().Gap("build"); gap {
		// A declared gap: refused before anything is built, saying why,
		// and warned about wherever a spec with a build section enters.
		if !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), why) {
			t.Fatalf("declared gap %q: want a NotImplemented refusal saying it, got %v", why, err)
		}
		if ws := x.e.Warnings(p); len(ws) != 1 || ws[0].Field != "build" {
			t.Fatalf("declared gap: want a warning on build, got %v", ws)
		}
		return
	}
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	x.up(p)
	if got := x.mustSh("app", "cat /built.txt"); got != "built "+one {
		t.Fatalf("built image: /built.txt is %q, want %q", got, "built "+one)
	}

	writeContext(t, dir, two)
	second, runStep, err := x.build(bx, p)
	if err != nil {
		t.Fatalf("rebuild after an edit: %v", err)
	}
	if second.ID == first.ID {
		t.Fatalf("rebuild after an edit: same image %s", second.ID)
	}
	x.up(p) // the new image recreates the container
	if got := x.mustSh("app", "cat /built.txt"); got != "built "+two {
		t.Fatalf("after the rebuild: /built.txt is %q, want %q", got, "built "+two)
	}
	if runStep == nil || runStep.Cached {
		t.Fatalf("rebuild after an edit: the RUN step was %+v, want run again", runStep)
	}

	if _, runStep, err = x.build(bx, p); err != nil {
		t.Fatalf("unchanged rebuild: %v", err)
	}
	if runStep == nil || !runStep.Cached {
		t.Fatalf("unchanged rebuild: the RUN step was %+v, want a cache hit", runStep)
	}
	runNetworkBuilds(x, bx)
}

// runNetworkBuilds: a build's RUN steps get a network namespace of their
// own by default, the host's only with network: host, which the default
// policy refuses before anything is built and CORNUS_ALLOW_PRIVILEGED
// allows.
func runNetworkBuilds(x *env, bx *builder.Builder) {
	t := x.t
	host, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		network string
		allow   bool
	}{{"", false}, {spec.BuildNetworkHost, false}, {spec.BuildNetworkHost, true}} {
		name := fmt.Sprintf("net%d", i)
		dir := t.TempDir()
		// The layer must differ per run and per case: the build cache
		// outlives tests, and the cases' images live until the cleanup.
		df := "FROM " + Image + "\nRUN echo " + x.project + "-" + name + " >/run-id && readlink /proc/self/ns/net > /netns\n"
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			t.Fatal(err)
		}
		app := sleeper(name)
		app.Image = x.project + "-" + name
		app.Build = &spec.Build{Context: dir, Network: c.network}
		p := x.proj(app)
		rs, err := bx.Build(x.ctx, p, nil, builder.Options{Progress: "quiet", Policy: hostpolicy.Policy{AllowPrivileged: c.allow}})
		for _, r := range rs {
			x.built = append(x.built, r.ID)
		}
		if c.network == spec.BuildNetworkHost && !c.allow {
			if !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), "build.network") {
				t.Fatalf("network: host under the default policy: want a refusal naming build.network, got %v", err)
			}
			if _, err := x.images().InspectImage(x.ctx, app.Image); !errdefs.IsNotFound(err) {
				t.Fatalf("a refused build left image %s (%v)", app.Image, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("build with network %q: %v", c.network, err)
		}
		app.Build = nil // the image is built: run it under the suite's policy
		x.up(x.proj(app))
		got := x.mustSh(name, "cat /netns")
		if (got == host) != (c.network == spec.BuildNetworkHost) {
			t.Fatalf("build with network %q: RUN ran in %s, the host's is %s", c.network, got, host)
		}
	}
}

func writeContext(t *testing.T, dir, msg string) {
	t.Helper()
	for name, content := range map[string]string{"Dockerfile": buildDockerfile, "msg.txt": msg + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// build builds p's images (removed with the case's containers) and
// returns the result and the RUN step as BuildKit reported it (its JSON
// progress).
func (x *env) build(bx *builder.Builder, p spec.Project) (builder.Result, *bkclient.Vertex, error) {
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(x.ctx, 2*time.Minute)
	defer cancel()
	rs, err := bx.Build(ctx, p, nil, builder.Options{Progress: "json", Out: &progress})
	for _, r := range rs {
		x.built = append(x.built, r.ID, r.Image)
	}
	if err != nil {
		return builder.Result{}, nil, err
	}
	var run *bkclient.Vertex
	sc := bufio.NewScanner(&progress)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var st struct {
			bkclient.SolveStatus
			Stream string `json:"stream"` // a builder without BuildKit (podman's)
		}
		if json.Unmarshal(sc.Bytes(), &st) != nil {
			continue
		}
		for _, v := range st.Vertexes {
			if strings.Contains(v.Name, "RUN echo") && v.Completed != nil {
				run = v
			}
		}
		// buildah: "STEP 3/3: RUN echo ...", then "--> Using cache ID"
		// when the step was cached.
		switch {
		case strings.HasPrefix(st.Stream, "STEP") && strings.Contains(st.Stream, "RUN echo"):
			run = &bkclient.Vertex{Name: st.Stream}
		case run != nil && run.Completed == nil && strings.HasPrefix(st.Stream, "-->"):
			now := time.Now()
			run.Completed, run.Cached = &now, strings.Contains(st.Stream, "Using cache")
		}
	}
	if len(rs) != 1 {
		return builder.Result{}, run, errdefs.ErrUnknown
	}
	return rs[0], run, nil
}

func init() {
	featureCases = append(featureCases, featureCase{
		feature: backends.FeatureContent,
		name:    "an image's content reads back: a manifest whose config says what the image runs, and every layer it lists",
		run: func(x *env) {
			c, _ := backends.Want[backends.ImageContenter](x.b, backends.FeatureContent, "image content")
			ic, err := c.ImageContent(x.ctx, Image)
			if err != nil {
				x.t.Fatal(err)
			}
			defer ic.Release()
			mf, err := images.Manifest(x.ctx, ic.Store, ic.Target, platforms.Default())
			if err != nil {
				x.t.Fatal(err)
			}
			data, err := content.ReadBlob(x.ctx, ic.Store, mf.Config)
			if err != nil {
				x.t.Fatal(err)
			}
			var cfg ocispec.Image
			if err := json.Unmarshal(data, &cfg); err != nil {
				x.t.Fatal(err)
			}
			img, err := x.images().InspectImage(x.ctx, Image)
			if err != nil {
				x.t.Fatal(err)
			}
			if !slices.Equal(cfg.Config.Cmd, img.Cmd) || !slices.Equal(cfg.Config.Env, img.Env) || !slices.Equal(cfg.Config.Entrypoint, img.Entrypoint) {
				x.t.Fatalf("the content's config runs %q %q with %q; the image %q %q with %q", cfg.Config.Entrypoint, cfg.Config.Cmd, cfg.Config.Env, img.Entrypoint, img.Cmd, img.Env)
			}
			if len(cfg.RootFS.DiffIDs) != len(mf.Layers) || len(mf.Layers) == 0 {
				x.t.Fatalf("%d layers, %d diff IDs", len(mf.Layers), len(cfg.RootFS.DiffIDs))
			}
			for _, l := range mf.Layers {
				if info, err := ic.Store.Info(x.ctx, l.Digest); err != nil || info.Size != l.Size {
					x.t.Fatalf("layer %s: %+v %v", l.Digest, info, err)
				}
			}
		},
	})
}
