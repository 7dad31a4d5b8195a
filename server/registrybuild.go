package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/errdefs"
	"github.com/containerd/platforms"
	godigest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/registry"
)

// registryBuilds is the backend the server's builder sees where the nodes
// pull (kubernetes): the backend, with the server's registry as its image
// store. A build runs on cornus's own buildkitd; its result goes into the
// registry as the tenant's repository (admitBuild claimed it), whence the
// nodes pull it as they pull a load. Bases the Dockerfile names come from
// the registry too, when it holds them.
type registryBuilds struct {
	backends.Backend
	s     *Server
	spool string // where a result waits for its import
}

var (
	_ backends.Images         = registryBuilds{}
	_ backends.ImageContenter = registryBuilds{}
)

// Capabilities is the backend's, able to build.
func (b registryBuilds) Capabilities() backends.Capabilities {
	c := b.Backend.Capabilities()
	gaps := make(map[string]string, len(c.Gaps))
	for k, v := range c.Gaps {
		if k != "build" {
			gaps[k] = v
		}
	}
	c.Gaps = gaps
	c.Features = slices.DeleteFunc(slices.Clone(c.Features), func(f backends.Feature) bool {
		return f == backends.FeatureImages || f == backends.FeatureContent || f == backends.FeatureBuild
	})
	c.Features = append(c.Features, backends.FeatureImages, backends.FeatureContent)
	return c
}

// manifest is image ref's manifest in the registry, and its repository;
// an errdefs.NotFound error when the registry does not hold it.
func (b registryBuilds) manifest(ctx context.Context, ref string) (string, registry.Manifest, error) {
	repo, tagOrDigest, _, ok := b.s.registryName(ref)
	if !ok {
		return "", registry.Manifest{}, fmt.Errorf("image %s: not a name in this server's registry: %w", ref, errdefs.ErrNotFound)
	}
	m, err := b.s.regStore.Manifest(ctx, repo, tagOrDigest)
	if errors.Is(err, registry.ErrNotFound) {
		return "", registry.Manifest{}, fmt.Errorf("image %s: %w", ref, errdefs.ErrNotFound)
	}
	if err != nil {
		return "", registry.Manifest{}, fmt.Errorf("image %s: %w", ref, err)
	}
	return repo, m, nil
}

// InspectImage reads ref's image from the registry: its ID is its
// config's digest, as a runtime reports it.
func (b registryBuilds) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	repo, m, err := b.manifest(ctx, ref)
	if err != nil {
		return backends.Image{}, err
	}
	id, onBuild, err := imageConfig(ctx, b.s.regStore, repo, m)
	if err != nil {
		return backends.Image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	return backends.Image{ID: id.String(), Tags: []string{ref}, OnBuild: onBuild}, nil
}

// imageConfig reads the config of m (for an index, of its manifest for
// this platform): its digest, the image's ID, and its ONBUILD triggers.
func imageConfig(ctx context.Context, s registry.Store, repo string, m registry.Manifest) (godigest.Digest, []string, error) {
	var doc struct {
		Config    ocispec.Descriptor   `json:"config"`
		Manifests []ocispec.Descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(m.Data, &doc); err != nil {
		return "", nil, fmt.Errorf("manifest %s: %w", m.Digest, err)
	}
	if len(doc.Manifests) > 0 {
		want := platforms.Only(platforms.DefaultSpec())
		for _, d := range doc.Manifests {
			if d.Platform == nil || want.Match(*d.Platform) {
				child, err := s.Manifest(ctx, repo, d.Digest.String())
				if err != nil {
					return "", nil, fmt.Errorf("manifest %s: %w", d.Digest, err)
				}
				return imageConfig(ctx, s, repo, child)
			}
		}
		return "", nil, fmt.Errorf("index %s: no manifest for %s: %w", m.Digest, platforms.DefaultString(), errdefs.ErrNotFound)
	}
	rc, err := s.OpenBlob(ctx, repo, doc.Config.Digest)
	if err != nil {
		return "", nil, fmt.Errorf("config %s: %w", doc.Config.Digest, err)
	}
	defer rc.Close()
	var cfg struct {
		Config struct {
			OnBuild []string `json:"OnBuild"`
		} `json:"config"`
	}
	if err := json.NewDecoder(io.LimitReader(rc, 4<<20)).Decode(&cfg); err != nil {
		return "", nil, fmt.Errorf("config %s: %w", doc.Config.Digest, err)
	}
	return doc.Config.Digest, cfg.Config.OnBuild, nil
}

// buildTenant keys the tenant a build is for in its context: its result
// counts against that tenant's registry quota.
type buildTenant struct{}

// fileSize is f's size, 0 if unknown.
func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// registryImageList lists the images of the registry's repositories that
// tenant may see, one per tag, as a runtime lists images.
func (s *Server) registryImageList(ctx context.Context, tenant string) ([]backends.Image, error) {
	repos, err := s.regStore.Repositories(ctx)
	if err != nil {
		return nil, fmt.Errorf("the registry's repositories: %w", err)
	}
	var out []backends.Image
	for _, repo := range repos {
		if !s.imageOwners.repoIsFor(tenant, repo) {
			continue
		}
		tags, err := s.regStore.Tags(ctx, repo)
		if errors.Is(err, registry.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", repo, err)
		}
		for _, tag := range tags {
			img, err := registryBuilds{s: s}.InspectImage(ctx, repo+":"+tag)
			if errdefs.IsNotFound(err) {
				continue // deleted meanwhile, or no image for this platform
			}
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		}
	}
	return out, nil
}

// LoadImage imports a built image's docker-archive into the registry.
func (b registryBuilds) LoadImage(ctx context.Context, r io.Reader) ([]string, error) {
	if err := os.MkdirAll(b.spool, 0o700); err != nil {
		return nil, fmt.Errorf("spool the built image: %w", err)
	}
	f, err := os.CreateTemp(b.spool, "build-*.tar")
	if err != nil {
		return nil, fmt.Errorf("spool the built image: %w", err)
	}
	defer removeSpooled(f)
	if _, err := io.Copy(f, r); err != nil {
		return nil, fmt.Errorf("spool the built image: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	tenant, ok := ctx.Value(buildTenant{}).(string)
	if !ok {
		return nil, fmt.Errorf("store the built image in the registry: the build names no tenant: %w", errdefs.ErrInvalidArgument)
	}
	if err := b.s.withinQuota(ctx, tenant, fileSize(f)); err != nil {
		return nil, err
	}
	imported, err := registry.Import(ctx, b.s.regStore, f)
	if err != nil {
		return nil, fmt.Errorf("store the built image in the registry: %w", err)
	}
	names := make([]string, 0, len(imported))
	for _, im := range imported {
		names = append(names, im.Name)
	}
	return names, nil
}

// ListImages is not what a build asks.
func (registryBuilds) ListImages(context.Context) ([]backends.Image, error) {
	return nil, fmt.Errorf("list images of the registry: %w", errdefs.ErrNotImplemented)
}

// RemoveImage is not what a build asks.
func (registryBuilds) RemoveImage(_ context.Context, ref string, _ bool) error {
	return fmt.Errorf("remove image %s from the registry: %w", ref, errdefs.ErrNotImplemented)
}

// ImageContent hands a base image the registry holds to the build.
func (b registryBuilds) ImageContent(ctx context.Context, ref string) (backends.ImageContent, error) {
	repo, m, err := b.manifest(ctx, ref)
	if err != nil {
		return backends.ImageContent{}, err
	}
	target := ocispec.Descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: int64(len(m.Data))}
	return backends.ImageContent{Store: repoContent{s: b.s.regStore, repo: repo}, Target: target, Release: func() {}}, nil
}

// repoContent is one repository of a registry store as read-only
// containerd content: its manifests and the blobs linked to it.
type repoContent struct {
	s    registry.Store
	repo string
}

var errRegistryReadOnly = fmt.Errorf("the registry is read-only to builds: %w", errdefs.ErrPermissionDenied)

func (c repoContent) Info(ctx context.Context, d godigest.Digest) (content.Info, error) {
	if m, err := c.s.Manifest(ctx, c.repo, d.String()); err == nil {
		return content.Info{Digest: d, Size: int64(len(m.Data))}, nil
	}
	size, err := c.s.Blob(ctx, c.repo, d)
	if errors.Is(err, registry.ErrNotFound) {
		return content.Info{}, fmt.Errorf("content %s: %w", d, errdefs.ErrNotFound)
	}
	if err != nil {
		return content.Info{}, err
	}
	return content.Info{Digest: d, Size: size}, nil
}

func (c repoContent) ReaderAt(ctx context.Context, desc ocispec.Descriptor) (content.ReaderAt, error) {
	if m, err := c.s.Manifest(ctx, c.repo, desc.Digest.String()); err == nil {
		return bytesReaderAt{bytes.NewReader(m.Data), int64(len(m.Data))}, nil
	}
	size, err := c.s.Blob(ctx, c.repo, desc.Digest)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, fmt.Errorf("content %s: %w", desc.Digest, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	rc, err := c.s.OpenBlob(ctx, c.repo, desc.Digest)
	if err != nil {
		return nil, err
	}
	ra, ok := rc.(readerAtCloser)
	if !ok {
		_ = rc.Close()
		return nil, fmt.Errorf("content %s: the registry's store reads no ranges: %w", desc.Digest, errdefs.ErrNotImplemented)
	}
	return fileReaderAt{ra, size}, nil
}

// Walk lists nothing: a build reads content by digest.
func (repoContent) Walk(context.Context, content.WalkFunc, ...string) error { return nil }

func (repoContent) Update(context.Context, content.Info, ...string) (content.Info, error) {
	return content.Info{}, errRegistryReadOnly
}
func (repoContent) Delete(context.Context, godigest.Digest) error { return errRegistryReadOnly }
func (repoContent) Status(context.Context, string) (content.Status, error) {
	return content.Status{}, errRegistryReadOnly
}
func (repoContent) ListStatuses(context.Context, ...string) ([]content.Status, error) {
	return nil, nil
}
func (repoContent) Abort(context.Context, string) error { return errRegistryReadOnly }
func (repoContent) Writer(context.Context, ...content.WriterOpt) (content.Writer, error) {
	return nil, errRegistryReadOnly
}

type readerAtCloser interface {
	io.ReaderAt
	io.Closer
}

type fileReaderAt struct {
	readerAtCloser
	size int64
}

func (f fileReaderAt) Size() int64 { return f.size }

type bytesReaderAt struct {
	*bytes.Reader
	size int64
}

func (b bytesReaderAt) Size() int64 { return b.size }
func (bytesReaderAt) Close() error  { return nil }
