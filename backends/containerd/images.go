package containerd

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
)

// normalize turns a Docker-style reference into containerd's full name
// (busybox → docker.io/library/busybox:latest).
func normalize(ref string) (string, error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %v: %w", ref, err, errdefs.ErrInvalidArgument)
	}
	return reference.TagNameOnly(n).String(), nil
}

// familiar is the short form users type (cornus-test/busybox:1).
func familiar(name string) string {
	if n, err := reference.ParseNormalizedNamed(name); err == nil {
		return reference.FamiliarString(n)
	}
	return name
}

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	ctx = b.ns(ctx)
	name, err := normalize(ref)
	if err != nil {
		return backends.Image{}, err
	}
	img, err := b.cli.GetImage(ctx, name)
	if err != nil {
		return backends.Image{}, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return b.imageOf(ctx, img, []string{familiar(name)})
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
	out := backends.Image{
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
			tags = append(tags, familiar(img.Name()))
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
		refs = append(refs, familiar(m.Name))
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
	name, err := normalize(ref)
	if err != nil {
		return err
	}
	if err := b.cli.ImageService().Delete(ctx, name, images.SynchronousDelete()); err != nil {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	return nil
}

// PullImage fetches an image; registries on loopback, and those in
// CORNUS_CONTAINERD_INSECURE_REGISTRIES, are spoken to over plain HTTP.
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	ctx = b.ns(ctx)
	name, err := normalize(ref)
	if err != nil {
		return err
	}
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: docker.ConfigureDefaultRegistries(docker.WithPlainHTTP(b.plainHTTP))})
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulling " + ref})
	}
	if _, err := b.cli.Pull(ctx, name, client.WithPullUnpack, client.WithPullSnapshotter(b.cfg.snapshotter), client.WithResolver(resolver)); err != nil {
		return fmt.Errorf("pull %s: %w", ref, err)
	}
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulled " + ref})
	}
	return nil
}

// plainHTTP says whether a registry host is spoken to without TLS.
func (b *Backend) plainHTTP(host string) (bool, error) {
	if ok, _ := docker.MatchLocalhost(host); ok {
		return true, nil
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	for _, r := range b.cfg.insecure {
		if strings.EqualFold(r, host) || strings.EqualFold(r, h) {
			return true, nil
		}
	}
	return false, nil
}
