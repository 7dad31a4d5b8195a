package builder

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/containerd/errdefs"
	bkclient "github.com/moby/buildkit/client"
	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/spec"
)

// Options tune one run of builds (cornus compose build, up --build).
type Options struct {
	// NoCache and Pull apply to every build (--no-cache, --pull).
	NoCache bool
	Pull    bool
	// Args override the services' build args (--build-arg).
	Args map[string]string
	// Progress is the display: auto, tty, plain, json (BuildKit's raw
	// status as JSON lines) or quiet.
	Progress string
	// Out receives the progress display.
	Out io.Writer
	// Policy is the host policy builds are checked against.
	Policy hostpolicy.Policy
	// Files is where the builds' files are (nil: this machine's,
	// LocalFiles with the Builder's environment).
	Files Files
	// CheckImage, when set, is asked about each image a build reads (its
	// Dockerfile's FROM, COPY --from and mounts, the ONBUILD triggers of
	// those, its docker-image:// contexts) before it starts: a server
	// refuses another tenant's.
	CheckImage func(ctx context.Context, service, ref string) error
	// Tenant, when set, is whom the builds are for on a builder that
	// builds for others too (cornus serve): its cache mounts are its
	// own, and what would let a build escape CheckImage is refused
	// (tenantRules).
	Tenant string
}

// Result is one built image.
type Result struct {
	Service string
	Image   string // the name it was built as (the App's image)
	ID      string // the image's ID (or manifest digest) in the backend's store
}

// Builder builds images into one backend's store, where the backend
// says (backends.Builder) or with a buildkitd of cornus's own.
type Builder struct {
	backend backends.Backend
	environ []string

	mu   sync.Mutex
	site site
}

// New returns a Builder for b. environ is the client's environment: the
// ssh agent, secrets from variables, CORNUS_BUILDKIT_* settings.
func New(b backends.Backend, environ []string) *Builder {
	return &Builder{backend: b, environ: environ}
}

// Close ends what the Builder started (a buildkitd it supervises).
func (x *Builder) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.site == nil {
		return nil
	}
	err := x.site.close()
	x.site = nil
	return err
}

// Build builds the images of the named services of p (every service with
// a build section when names is empty), in parallel, each after the
// services whose images it uses as a context (service:NAME). Nothing is
// built when one of them asks for host power the policy refuses.
func (x *Builder) Build(ctx context.Context, p spec.Project, names []string, o Options) ([]Result, error) {
	jobs, err := plan(p, names)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	return x.build(ctx, jobs, o)
}

// BuildOne builds one image from b, named tags (none: untagged), for a
// client that is not a project (the Docker API's POST /build); service
// names the build in progress and errors.
func (x *Builder) BuildOne(ctx context.Context, service string, b spec.Build, tags []string, platform string, o Options) (Result, error) {
	platform, err := checkPlatforms(service, platform, b.Platforms)
	if err != nil {
		return Result{}, err
	}
	rs, err := x.build(ctx, []job{{service: service, build: b, tags: tags, platform: platform}}, o)
	if len(rs) == 0 {
		return Result{Service: service, Image: firstTag(tags)}, err
	}
	return rs[0], err
}

// build checks jobs against the policy, then builds them at the
// backend's site in one display.
func (x *Builder) build(ctx context.Context, jobs []job, o Options) ([]Result, error) {
	for _, j := range jobs {
		if err := policyCheck(o.Policy, j); err != nil {
			return nil, err
		}
	}
	s, err := x.openSite(ctx)
	if err != nil {
		return nil, err
	}
	d, err := newDisplay(ctx, o.Progress, o.Out, len(jobs) > 1)
	if err != nil {
		return nil, err
	}
	results, err := x.run(ctx, s, jobs, o, d)
	if derr := d.wait(); err == nil {
		err = derr
	}
	return results, err
}

// run builds jobs, each once the images it names as contexts are built.
func (x *Builder) run(ctx context.Context, s site, jobs []job, o Options, d *display) ([]Result, error) {
	done := map[string]chan struct{}{}
	for _, j := range jobs {
		done[j.service] = make(chan struct{})
	}
	results := make([]Result, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	for i, j := range jobs {
		g.Go(func() error {
			for _, dep := range j.deps {
				if ch, ok := done[dep]; ok {
					select {
					case <-ch:
					case <-gctx.Done():
						return gctx.Err()
					}
				}
			}
			id, err := x.one(gctx, s, j, o, d)
			if err != nil {
				return fmt.Errorf("build service %s: %w", j.service, err)
			}
			results[i] = Result{Service: j.service, Image: firstTag(j.tags), ID: id}
			close(done[j.service])
			return nil
		})
	}
	err := g.Wait()
	return slices.DeleteFunc(results, func(r Result) bool { return r.Service == "" }), err
}

// one builds j at site s.
func (x *Builder) one(ctx context.Context, s site, j job, o Options, d *display) (string, error) {
	files := o.Files
	if files == nil {
		files = LocalFiles{Environ: x.environ}
	}
	src, err := openSource(ctx, files, j.build)
	if err != nil {
		return "", err
	}
	defer src.close()
	r := run{args: buildArgs(j.build, o), opts: o, display: d}
	if err := x.admit(ctx, j, src, r); err != nil {
		return "", err
	}
	if len(j.build.Extend) > 0 {
		images, _ := backends.Want[backends.Images](x.backend, backends.FeatureImages, "images")
		if j.build.Target, err = extend(ctx, j, src, r.args, images); err != nil {
			return "", err
		}
		if err := x.admit(ctx, j, src, r); err != nil { // the stages added read images too
			return "", err
		}
	}
	return s.build(ctx, j, src, r)
}

// admit checks the Dockerfile src holds (pinned: what the builder
// reads) against the run's tenant rules and its images against
// CheckImage.
func (x *Builder) admit(ctx context.Context, j job, src *source, r run) error {
	if r.opts.Tenant != "" {
		if err := tenantRules(j, src, r.args); err != nil {
			return err
		}
	}
	if r.opts.CheckImage != nil {
		return x.checkImages(ctx, j, src, r.args, r.opts.CheckImage)
	}
	return nil
}

// checkImages asks check about every image j reads: those its
// Dockerfile names, and those the ONBUILD triggers of the images it
// reads name (run by the frontend as if written in the Dockerfile).
func (x *Builder) checkImages(ctx context.Context, j job, src *source, args map[string]string, check func(ctx context.Context, service, ref string) error) error {
	df, err := readDockerfile(src)
	if err != nil {
		return err
	}
	fargs := frontendArgs(j, args)
	refs, err := imagesRead(df, fargs)
	if err != nil {
		return err
	}
	for _, v := range src.refs {
		if ref, ok := strings.CutPrefix(v, "docker-image://"); ok {
			refs = append(refs, ref)
		}
	}
	images, _ := backends.Want[backends.Images](x.backend, backends.FeatureImages, "images")
	for _, ref := range refs {
		if err := check(ctx, j.service, ref); err != nil {
			return err
		}
		if images == nil {
			continue
		}
		img, err := images.InspectImage(ctx, ref)
		if errdefs.IsNotFound(err) {
			continue // not in the store: no triggers of its run here
		}
		if err != nil {
			return fmt.Errorf("image %s: %w", ref, err)
		}
		if len(img.OnBuild) == 0 {
			continue
		}
		// The triggers, read after the Dockerfile: its stages are theirs.
		withTriggers := append(slices.Clone(df), "\n"+strings.Join(img.OnBuild, "\n")+"\n"...)
		triggered, err := imagesRead(withTriggers, fargs)
		if err != nil {
			return fmt.Errorf("image %s: its ONBUILD triggers: %w", ref, err)
		}
		for _, t := range triggered {
			if slices.Contains(refs, t) {
				continue
			}
			if err := check(ctx, j.service, t); err != nil {
				return fmt.Errorf("image %s: its ONBUILD triggers: %w", ref, err)
			}
		}
	}
	return nil
}

// solve builds j with BuildKit at kit site k.
func solve(ctx context.Context, k kitSite, j job, src *source, r run) (string, error) {
	if err := k.prepare(ctx, j, src, r.args); err != nil {
		return "", err
	}
	opt, err := solveOpt(j, src, r.opts)
	if err != nil {
		return "", err
	}
	c, err := k.client(ctx)
	if err != nil {
		return "", err
	}
	ex := k.export(ctx, j.tags)
	opt.Exports = ex.entries
	resp, err := c.Solve(ctx, nil, opt, r.display.channel(j.service))
	if err != nil {
		ex.abort(err)
		return "", err
	}
	return ex.finish(ctx, resp)
}

// run is what one build is run with.
type run struct {
	args    map[string]string // the build's args with the run's overrides
	opts    Options
	display *display
}

// plan orders the builds of names (every service with a build section
// when empty); service:NAME contexts are resolved to that service's
// image.
func plan(p spec.Project, names []string) ([]job, error) {
	if len(names) == 0 {
		names = p.ServiceNames()
	}
	var jobs []job
	for _, name := range names {
		a, ok := p.Services[name]
		if !ok {
			return nil, fmt.Errorf("no such service: %s: %w", name, errdefs.ErrNotFound)
		}
		if a.Build == nil {
			continue
		}
		b := spec.DeepCopy(*a.Build)
		for k, v := range b.AdditionalContexts {
			dep, isService := strings.CutPrefix(v, "service:")
			if !isService {
				continue
			}
			da, ok := p.Services[dep]
			if !ok || da.Build == nil {
				return nil, fmt.Errorf("service %s: build.additional_contexts.%s: %q names no service with a build section", name, k, v)
			}
			b.AdditionalContexts[k] = "docker-image://" + da.Image
		}
		platform, err := checkPlatforms(name, a.Platform, b.Platforms)
		if err != nil {
			return nil, err
		}
		tags := append([]string{a.Image}, b.Tags...)
		jobs = append(jobs, job{service: name, build: b, tags: tags, platform: platform, deps: serviceDeps(*a.Build)})
	}
	return jobs, nil
}

// serviceDeps are the services whose images b uses as contexts.
func serviceDeps(b spec.Build) []string {
	var out []string
	for _, v := range slices.Sorted(maps.Values(b.AdditionalContexts)) {
		if dep, ok := strings.CutPrefix(v, "service:"); ok {
			out = append(out, dep)
		}
	}
	return out
}

func policyCheck(p hostpolicy.Policy, j job) error { return Check(p, j.service, j.build) }

// Check refuses what of b the host policy does not allow, naming the
// field (services.SERVICE.build.FIELD); every build is checked before it
// starts.
func Check(p hostpolicy.Policy, service string, b spec.Build) error {
	proj := spec.Project{Services: map[string]spec.App{service: {Build: &b}}}
	if err := p.Check(proj); err != nil {
		return fmt.Errorf("build service %s: %w", service, err)
	}
	return nil
}

// site is where a backend's images are built.
type site interface {
	// build builds j from src and returns the image's ID.
	build(ctx context.Context, j job, src *source, r run) (string, error)
	close() error
}

// kitSite is a site that is a BuildKit (its build is solve).
type kitSite interface {
	site
	// client is a BuildKit client to the site's builder.
	client(ctx context.Context) (*bkclient.Client, error)
	// prepare resolves what j reads from the backend's store (its base
	// images, on a builder that cannot see that store) into src; args
	// are the build's args (FROM lines may name them).
	prepare(ctx context.Context, j job, src *source, args map[string]string) error
	// export is how one result reaches the backend's store under tags.
	export(ctx context.Context, tags []string) export
}

// export stores one solve's result: entries are the solve's exporters;
// finish returns the image's ID once the solve succeeded, abort ends
// what entries started when it failed.
type export struct {
	entries []bkclient.ExportEntry
	finish  func(context.Context, *bkclient.SolveResponse) (string, error)
	abort   func(error)
}

// openSite opens the backend's build site once.
func (x *Builder) openSite(ctx context.Context) (site, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.site != nil {
		return x.site, nil
	}
	s, err := x.newSite(ctx)
	if err != nil {
		return nil, err
	}
	x.site = s
	return s, nil
}

func (x *Builder) newSite(ctx context.Context) (site, error) {
	if why, gap := x.backend.Capabilities().Gap("build"); gap {
		return nil, fmt.Errorf("building images is not supported by the %s backend: %s: %w", x.backend.Name(), why, errdefs.ErrNotImplemented)
	}
	if bb, ok := x.backend.(backends.Builder); ok && x.backend.Capabilities().Has(backends.FeatureBuild) {
		bs, err := bb.BuildSite(ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case bs.Native != nil:
			return &nativeSite{native: bs.Native}, nil
		case bs.Dial != nil:
			return newDaemonSite(ctx, bs.Dial)
		case bs.Containerd != nil && envlist.Get(x.environ, EnvBuildWorker) != "oci":
			return newContainerdSite(ctx, *bs.Containerd, x.environ)
		}
	}
	return newOCISite(ctx, x.backend, x.environ)
}

// firstTag is the first of tags, "" when there is none.
func firstTag(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return tags[0]
}
