package server

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
)

// scoped is the backend as one tenant's docker endpoint sees it (the
// caretaker's docker role): its own projects' containers, volumes,
// networks and the images it may use, nothing else. Whatever the Engine
// API route, it reaches the runtime through here, so a container, volume
// or network of another tenant (or of nobody: the operator's, cornus's
// companions) is not found, and every create is admitted as an up's spec
// is (admit.go): images, namespaces, networks and volumes must be the
// tenant's; the host policy is dockerapi's, with this server's policy.
//
// It implements the optional interfaces it scopes, and declares of them
// only those the runtime has; the rest (pull, push, build, commit,
// export, image load) answer "not supported" through the endpoint.
type scoped struct {
	s      *Server
	b      backends.Backend
	tenant string
	// project is the deployment's: what a container, volume or network
	// made with no Compose project (docker run, docker volume create)
	// joins.
	project string
}

var (
	_ backends.Images           = (*scoped)(nil)
	_ backends.Networks         = (*scoped)(nil)
	_ backends.NetworkConnector = (*scoped)(nil)
	_ backends.Signaler         = (*scoped)(nil)
	_ backends.Restarter        = (*scoped)(nil)
	_ backends.Pauser           = (*scoped)(nil)
	_ backends.Attacher         = (*scoped)(nil)
	_ backends.Copier           = (*scoped)(nil)
	_ backends.ProcessLister    = (*scoped)(nil)
	_ backends.Renamer          = (*scoped)(nil)
	_ backends.EventSource      = (*scoped)(nil)
	_ backends.StatsSource      = (*scoped)(nil)
)

func (sc *scoped) Name() string { return sc.b.Name() }

// Capabilities are the runtime's, less the optional features the scope
// does not carry.
func (sc *scoped) Capabilities() backends.Capabilities {
	c := sc.b.Capabilities()
	c.Features = slices.DeleteFunc(slices.Clone(c.Features), func(f backends.Feature) bool { return !backends.Implements(sc, f) })
	return c
}

func (sc *scoped) Close() error { return nil }

// mine reports whether labels are of one of the tenant's projects, and
// not a caretaker companion's or its shared volume's (the companion holds
// the deployment's caretaker token and mount privileges).
func (sc *scoped) mine(labels map[string]string) bool {
	if labels[engine.LabelCompanionOf] != "" || labels[caretaker.LabelSharedVolume] != "" {
		return false
	}
	p := labels[backends.ComposeProject]
	return p != "" && sc.s.owners.owns(sc.tenant, p)
}

func noSuch(what, ref string) error {
	return fmt.Errorf("no such %s: %s: %w", what, ref, errdefs.ErrNotFound)
}

// own is container ref, if it is the tenant's.
func (sc *scoped) own(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	d, err := sc.b.Inspect(ctx, ref)
	if err != nil {
		return d, err
	}
	if !sc.mine(d.Labels) {
		return backends.ContainerDetails{}, noSuch("container", ref)
	}
	return d, nil
}

// ownID runs f on container ref's ID, if it is the tenant's.
func (sc *scoped) ownID(ctx context.Context, ref string, f func(id string) error) error {
	d, err := sc.own(ctx, ref)
	if err != nil {
		return err
	}
	return f(d.ID)
}

func (sc *scoped) Create(ctx context.Context, c backends.ContainerSpec) (backends.Container, error) {
	c, err := sc.admitContainer(ctx, c)
	if err != nil {
		return backends.Container{}, err
	}
	made, err := sc.b.Create(ctx, c)
	return made, taken("container", c.Name, err)
}

// taken is a create's error, saying no more of a name conflict than that
// the name is taken (the runtime's names the holder, maybe another
// tenant's).
func taken(what, name string, err error) error {
	if errdefs.IsConflict(err) {
		return fmt.Errorf("%s name %s is taken: choose another: %w", what, name, errdefs.ErrConflict)
	}
	return err
}

// ownName refuses a name that would pass for another's: a name of one of
// the projects of another tenant (sc.s.owners.squatted), or a caretaker
// companion's.
func (sc *scoped) ownName(what string, names ...string) error {
	for _, n := range names {
		if n == "" {
			continue
		}
		if strings.Contains(n, "caretaker") {
			return fmt.Errorf("%w: %s %s: names with \"caretaker\" are cornus's own", errdefs.ErrPermissionDenied, what, n)
		}
		if p := sc.s.owners.squatted(sc.tenant, n); p != "" {
			return fmt.Errorf("%w: %s %s: the name is project %s's, which is not yours", errdefs.ErrPermissionDenied, what, n, p)
		}
	}
	return nil
}

func (sc *scoped) Start(ctx context.Context, id string) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.Start(ctx, id) })
}

func (sc *scoped) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.Stop(ctx, id, o) })
}

func (sc *scoped) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.Remove(ctx, id, o) })
}

func (sc *scoped) List(ctx context.Context, o backends.ListOptions) ([]backends.Container, error) {
	cs, err := sc.b.List(ctx, o)
	return slices.DeleteFunc(cs, func(c backends.Container) bool { return !sc.mine(c.Labels) }), err
}

func (sc *scoped) Inspect(ctx context.Context, id string) (backends.ContainerDetails, error) {
	return sc.own(ctx, id)
}

func (sc *scoped) Wait(ctx context.Context, id string) (code int, err error) {
	err = sc.ownID(ctx, id, func(id string) error { code, err = sc.b.Wait(ctx, id); return err })
	return code, err
}

func (sc *scoped) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	return sc.ownID(ctx, id, func(id string) error { return sc.b.Logs(ctx, id, o) })
}

func (sc *scoped) Exec(ctx context.Context, id string, o backends.ExecOptions) (code int, err error) {
	err = sc.ownID(ctx, id, func(id string) error { code, err = sc.b.Exec(ctx, id, o); return err })
	return code, err
}

// EnsureVolume makes the volume in the request's project (none: the
// deployment's) if the tenant may, and refuses a volume of that name
// that exists and is not the tenant's.
func (sc *scoped) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	return ensureOwned(ctx, sc, "volume", v.Key, v.Volume.Name, v.Labels, v.Project,
		func(labels map[string]string, project string) (backends.Volume, error) {
			v.Labels, v.Project = labels, project
			return sc.b.EnsureVolume(ctx, v)
		}, func(got backends.Volume) (string, map[string]string) { return got.Name, got.Labels })
}

// ensureOwned is a volume's or network's EnsureVolume or EnsureNetwork
// (ensure, with the labels and project claimLabels gives it) for a name
// of the tenant's own (ownName), refusing what it returns when that
// existed and is not the tenant's (runtimes find them by name).
func ensureOwned[T any](ctx context.Context, sc *scoped, what, key, name string, labels map[string]string, project string,
	ensure func(labels map[string]string, project string) (T, error), of func(T) (string, map[string]string)) (T, error) {
	var zero T
	if err := sc.ownName(what, key, name); err != nil {
		return zero, err
	}
	labels, project, err := sc.claimLabels(ctx, what+" "+key, labels, project)
	if err != nil {
		return zero, err
	}
	got, err := ensure(labels, project)
	if err != nil {
		return got, err
	}
	if gotName, gotLabels := of(got); !sc.mine(gotLabels) {
		return zero, fmt.Errorf("%w: %s %s exists and is not one of your projects'", errdefs.ErrPermissionDenied, what, gotName)
	}
	return got, nil
}

func (sc *scoped) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	vs, err := sc.b.ListVolumes(ctx, o)
	return slices.DeleteFunc(vs, func(v backends.Volume) bool { return !sc.mine(v.Labels) }), err
}

func (sc *scoped) RemoveVolume(ctx context.Context, name string, force bool) error {
	vs, err := sc.ListVolumes(ctx, backends.ListOptions{})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(vs, func(v backends.Volume) bool { return v.Name == name }) {
		return noSuch("volume", name)
	}
	return sc.b.RemoveVolume(ctx, name, force)
}

// claimLabels checks a create's labels (none of cornus's own, but those
// it derives from Compose's) and puts what is created in its Compose
// project (none: the deployment's), which the tenant owns or now claims
// (as an up does: an unowned project that exists is refused); the
// tenant's label is set.
func (sc *scoped) claimLabels(ctx context.Context, at string, labels map[string]string, project string) (map[string]string, string, error) {
	if err := userLabels(at, labels); err != nil {
		return nil, "", err
	}
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	if p := out[backends.ComposeProject]; p != "" {
		project = p
	}
	if project == "" {
		project = sc.project
	}
	if err := validProject(project); err != nil {
		return nil, "", fmt.Errorf("%s: %w", at, err)
	}
	if _, err := sc.s.owners.claim(sc.tenant, project, func() (bool, error) { return present(ctx, sc.s.b, project) }); err != nil {
		return nil, "", fmt.Errorf("%s: %w", at, err)
	}
	out[backends.ComposeProject] = project
	out[LabelTenant] = sc.tenant
	return out, project, nil
}

// derivedLabels are the cornus labels createbody derives from Compose's
// (identityLabels): a create may carry them with those values only.
var derivedLabels = map[string]string{
	backends.LabelProject: backends.ComposeProject,
	backends.LabelApp:     backends.ComposeService,
	backends.LabelReplica: backends.ComposeNumber,
}

// userLabels refuses a label that only cornus sets, but for those it
// derives from Compose's own.
func userLabels(at string, labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if from, ok := derivedLabels[k]; ok && labels[k] == labels[from] {
			continue
		}
		if k == backends.LabelOneoff && strings.EqualFold(labels[backends.ComposeOneoff], "true") {
			continue
		}
		for _, pre := range reservedLabelPrefixes {
			if pre != "com.docker.compose." && strings.HasPrefix(k, pre) {
				return fmt.Errorf("%w: %s: label %s: labels starting with %s are cornus's own", errdefs.ErrInvalidArgument, at, k, pre)
			}
		}
	}
	return nil
}

// Images: the tenant's and the operator's, never another tenant's or
// cornus's own (imageowners.go).

func (sc *scoped) images() backends.Images { return sc.b.(backends.Images) }

func (sc *scoped) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	img, err := sc.images().InspectImage(ctx, ref)
	if err == nil && (reserved(ref) || slices.ContainsFunc(img.Tags, reserved) || !sc.s.imageOwners.visible(sc.tenant, img)) {
		return backends.Image{}, noSuch("image", ref)
	}
	return img, err
}

func (sc *scoped) LoadImage(context.Context, io.Reader) ([]string, error) {
	return nil, fmt.Errorf("%w: loading images through the docker endpoint: load them with cornus image load (their names become yours)", errdefs.ErrNotImplemented)
}

func (sc *scoped) ListImages(ctx context.Context) ([]backends.Image, error) {
	imgs, err := sc.images().ListImages(ctx)
	out := imgs[:0]
	for _, img := range imgs {
		if !sc.s.imageOwners.visible(sc.tenant, img) || slices.ContainsFunc(img.Tags, reserved) {
			continue
		}
		if len(img.Tags) > 0 {
			img.Tags = sc.s.imageOwners.visibleTags(sc.tenant, img)
		}
		out = append(out, img)
	}
	return out, err
}

func (sc *scoped) RemoveImage(_ context.Context, ref string, _ bool) error {
	return fmt.Errorf("%w: removing image %s through the docker endpoint: remove it with cornus image rm", errdefs.ErrNotImplemented, ref)
}
