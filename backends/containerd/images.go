package containerd

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/platforms"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
)

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	ctx = b.ns(ctx)
	name, err := daemonless.Normalize(ref)
	if err != nil {
		return backends.Image{}, err
	}
	img, err := b.cli.GetImage(ctx, name)
	if err != nil {
		return backends.Image{}, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return b.imageOf(ctx, img, []string{daemonless.Familiar(name)})
}

func (b *Backend) imageOf(ctx context.Context, img client.Image, tags []string) (backends.Image, error) {
	cfg, err := img.Config(ctx)
	if err != nil {
		return backends.Image{}, fmt.Errorf("inspect image %s: config: %w", img.Name(), err)
	}
	spec, err := img.Spec(ctx)
	if err != nil {
		return backends.Image{}, fmt.Errorf("inspect image %s: %w", img.Name(), err)
	}
	size, _ := img.Size(ctx)
	raw, err := content.ReadBlob(ctx, img.ContentStore(), cfg)
	if err != nil {
		return backends.Image{}, fmt.Errorf("inspect image %s: config: %w", img.Name(), err)
	}
	out := backends.Image{OnBuild: backends.OnBuildOf(raw),
		ID: cfg.Digest.String(), Tags: tags, Size: size, LastTagged: img.Metadata().UpdatedAt,
		Entrypoint: spec.Config.Entrypoint, Cmd: spec.Config.Cmd, Env: spec.Config.Env, WorkingDir: spec.Config.WorkingDir,
		User: spec.Config.User, Labels: spec.Config.Labels, Architecture: spec.Architecture, OS: spec.OS,
	}
	if spec.Created != nil {
		out.Created = *spec.Created
	}
	for p := range spec.Config.ExposedPorts {
		out.ExposedPorts = append(out.ExposedPorts, p)
	}
	slices.Sort(out.ExposedPorts)
	return out, nil
}

// ListImages lists local images, one entry per image with all its names.
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	ctx = b.ns(ctx)
	imgs, err := b.cli.ListImages(ctx)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	byTarget := map[string][]client.Image{}
	var order []string
	for _, img := range imgs {
		t := img.Target().Digest.String()
		if _, ok := byTarget[t]; !ok {
			order = append(order, t)
		}
		byTarget[t] = append(byTarget[t], img)
	}
	var out []backends.Image
	for _, t := range order {
		group := byTarget[t]
		var tags []string
		for _, img := range group {
			tags = append(tags, daemonless.Familiar(img.Name()))
		}
		slices.Sort(tags)
		i, err := b.imageOf(ctx, group[0], tags)
		if err != nil {
			continue // an image whose content is gone (garbage) is not listed
		}
		out = append(out, i)
	}
	return out, nil
}

// LoadImage imports a docker-archive or OCI-layout tar and unpacks it for
// the snapshotter; images already there are not fetched again.
func (b *Backend) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	ctx = b.ns(ctx)
	imgs, err := b.cli.Import(ctx, tar, client.WithImportPlatform(platforms.DefaultStrict()))
	if err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	var refs []string
	for _, m := range imgs {
		img := client.NewImage(b.cli, m)
		if err := b.unpack(ctx, img); err != nil {
			return nil, err
		}
		refs = append(refs, daemonless.Familiar(m.Name))
	}
	return refs, nil
}

func (b *Backend) unpack(ctx context.Context, img client.Image) error {
	ok, err := img.IsUnpacked(ctx, b.cfg.snapshotter)
	if err == nil && ok {
		return nil
	}
	if err := img.Unpack(ctx, b.cfg.snapshotter); err != nil {
		return fmt.Errorf("unpack image %s for %s: %w", img.Name(), b.cfg.snapshotter, err)
	}
	return nil
}

// RemoveImage removes an image name.
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	ctx = b.ns(ctx)
	name, err := daemonless.Normalize(ref)
	if err != nil {
		return err
	}
	if err := b.cli.ImageService().Delete(ctx, name, images.SynchronousDelete()); err != nil {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	return nil
}

// PullImage fetches an image; registries on loopback, and those in
// CORNUS_CONTAINERD_INSECURE_REGISTRIES, are spoken to over plain HTTP
// (daemonless.Core.Resolver).
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	ctx = b.ns(ctx)
	name, err := daemonless.Normalize(ref)
	if err != nil {
		return err
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulling " + ref})
	}
	if _, err := b.cli.Pull(ctx, name, client.WithPullUnpack, client.WithPullSnapshotter(b.cfg.snapshotter), client.WithResolver(b.Resolver())); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulled " + ref})
	}
	return nil
}
