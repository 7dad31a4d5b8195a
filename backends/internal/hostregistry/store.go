package hostregistry

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/imageref"
	"github.com/cornus-dev/cornus/registry"
)

// Host is a backend's image store as the registry uses it: images it
// can list, inspect, load, untag and save as a docker-archive.
type Host interface {
	backends.Images
	backends.ImageSaver
}

// New is the registry's store over host's images, staging under dir.
// localDomain is the domain host gives names loaded without one
// (podman's localhost): its images serve the repository without it.
func New(host Host, dir, localDomain string) (registry.Store, error) {
	stage, err := registry.NewFSStore(dir)
	if err != nil {
		return nil, err
	}
	return &registryStore{h: host, stage: stage, local: localDomain, exported: map[string]exported{}}, nil
}

type registryStore struct {
	h     Host
	stage *registry.FSStore
	local string

	mu sync.Mutex
	// exported remembers, per repo:tag, which host image was exported
	// as which staged manifest: a host that converts its images (incus)
	// gives the export a config of its own, not the image ID.
	exported map[string]exported
}

type exported struct {
	id       string
	manifest digest.Digest
}

// key is the stage's name of repo: one for app and library/app.
func key(repo string) string { return imageref.Repo(repo) }

// GC collects the stage (the server's hourly collection).
func (s *registryStore) GC(ctx context.Context, grace time.Duration) (registry.GCStats, error) {
	return s.stage.GC(ctx, grace)
}

func (s *registryStore) Blob(ctx context.Context, repo string, d digest.Digest) (int64, error) {
	return s.stage.Blob(ctx, key(repo), d)
}

func (s *registryStore) OpenBlob(ctx context.Context, repo string, d digest.Digest) (io.ReadSeekCloser, error) {
	return s.stage.OpenBlob(ctx, key(repo), d)
}

func (s *registryStore) PutBlob(ctx context.Context, repo string, d digest.Digest, size int64, r io.Reader) error {
	return s.stage.PutBlob(ctx, key(repo), d, size, r)
}

func (s *registryStore) LinkBlob(ctx context.Context, repo string, d digest.Digest) error {
	return s.stage.LinkBlob(ctx, key(repo), d)
}

func (s *registryStore) DeleteBlob(ctx context.Context, repo string, d digest.Digest) error {
	return s.stage.DeleteBlob(ctx, key(repo), d)
}

func (s *registryStore) Manifests(ctx context.Context, repo string) ([]digest.Digest, error) {
	return s.stage.Manifests(ctx, key(repo))
}

// Manifest serves a tag the host has as the host's image (exported into
// the stage when the stage lacks it), and anything else from the stage.
func (s *registryStore) Manifest(ctx context.Context, repo, ref string) (registry.Manifest, error) {
	k := key(repo)
	if _, err := digest.Parse(ref); err == nil {
		return s.stage.Manifest(ctx, k, ref)
	}
	img, err := s.h.InspectImage(ctx, k+":"+ref)
	if errdefs.IsNotFound(err) {
		return s.stage.Manifest(ctx, k, ref)
	}
	if err != nil {
		return registry.Manifest{}, err
	}
	staged, err := s.stage.Manifest(ctx, k, ref)
	if err == nil && (sameID(s.imageOf(ctx, k, staged), img.ID) || s.wasExported(k+":"+ref, img.ID, staged.Digest)) {
		return staged, nil
	}
	if err := s.export(ctx, k, ref); err != nil {
		return registry.Manifest{}, err
	}
	m, err := s.stage.Manifest(ctx, k, ref)
	if err == nil && staged.Digest != "" && staged.Digest != m.Digest {
		_ = s.stage.DeleteManifest(ctx, k, staged.Digest) // what the host's tag named before
	}
	if err == nil {
		s.mu.Lock()
		s.exported[k+":"+ref] = exported{id: img.ID, manifest: m.Digest}
		s.mu.Unlock()
	}
	return m, err
}

// wasExported reports whether staged manifest d is the export of the
// host's image id as name.
func (s *registryStore) wasExported(name, id string, d digest.Digest) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.exported[name]
	return ok && e.id == id && e.manifest == d
}

// imageOf is the image ID the host would give a staged manifest: its
// config digest (an index: its manifest for this host's platform).
func (s *registryStore) imageOf(ctx context.Context, repo string, m registry.Manifest) string {
	var doc struct {
		Config    struct{ Digest digest.Digest }
		Manifests []struct {
			Digest   digest.Digest
			Platform struct{ OS, Architecture string }
		}
	}
	if json.Unmarshal(m.Data, &doc) != nil {
		return ""
	}
	for _, c := range doc.Manifests {
		if c.Platform.OS == "linux" && c.Platform.Architecture == runtime.GOARCH {
			if child, err := s.stage.Manifest(ctx, repo, c.Digest.String()); err == nil {
				return s.imageOf(ctx, repo, child)
			}
		}
	}
	return doc.Config.Digest.String()
}

// export saves the host's repo:tag into the stage.
func (s *registryStore) export(ctx context.Context, repo, tag string) error {
	f, err := os.CreateTemp("", "cornus-registry-export-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := s.h.SaveImage(ctx, repo+":"+tag, f); err != nil {
		return fmt.Errorf("export image %s:%s: %w", repo, tag, err)
	}
	if _, err := registry.ImportAs(ctx, s.stage, f, repo+":"+tag); err != nil {
		return fmt.Errorf("export image %s:%s: %w", repo, tag, err)
	}
	return nil
}

// PutManifest stages m, and loads it into the host under each tag; what
// the host refuses (not an image, a layer it cannot read) stays staged.
func (s *registryStore) PutManifest(ctx context.Context, repo string, m registry.Manifest, tags ...string) error {
	k := key(repo)
	if err := s.stage.PutManifest(ctx, k, m, tags...); err != nil {
		return err
	}
	for _, tag := range tags {
		_ = s.load(ctx, k, tag, m) // refused: served from the stage (Manifest)
	}
	return nil
}

// load loads staged manifest m (an image's, or an index's for this
// platform) into the host as repo:tag.
func (s *registryStore) load(ctx context.Context, repo, tag string, m registry.Manifest) error {
	var doc struct {
		Config struct {
			MediaType string
			Digest    digest.Digest
			Size      int64
		}
		Layers []struct {
			Digest digest.Digest
			Size   int64
		}
		Manifests []struct {
			Digest   digest.Digest
			Platform struct{ OS, Architecture string }
		}
	}
	if err := json.Unmarshal(m.Data, &doc); err != nil {
		return err
	}
	for _, c := range doc.Manifests {
		if c.Platform.OS == "linux" && c.Platform.Architecture == runtime.GOARCH {
			child, err := s.stage.Manifest(ctx, repo, c.Digest.String())
			if err != nil {
				return err
			}
			return s.load(ctx, repo, tag, child)
		}
	}
	if !slices.Contains([]string{"application/vnd.oci.image.config.v1+json", "application/vnd.docker.container.image.v1+json"}, doc.Config.MediaType) {
		return fmt.Errorf("%s is not an image's config", doc.Config.MediaType)
	}
	for _, l := range doc.Layers {
		if !s.looksLikeLayer(ctx, repo, l.Digest) {
			return fmt.Errorf("layer %s is no tar", l.Digest) // an artifact's blob: a load would only fail, slowly
		}
	}
	blobs := []struct {
		Digest digest.Digest
		Size   int64
	}{{doc.Config.Digest, doc.Config.Size}}
	blobs = append(blobs, doc.Layers...)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.writeArchive(ctx, pw, repo, tag, blobs[0].Digest, blobs)) }()
	_, err := s.h.LoadImage(ctx, pr)
	pr.CloseWithError(err)
	return err
}

// looksLikeLayer reports whether staged blob d starts as a layer does: a
// gzip or zstd stream, or a tar header.
func (s *registryStore) looksLikeLayer(ctx context.Context, repo string, d digest.Digest) bool {
	r, err := s.stage.OpenBlob(ctx, repo, d)
	if err != nil {
		return false
	}
	defer r.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	return bytes.HasPrefix(head, []byte{0x1f, 0x8b}) || bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}) ||
		n == 512 && string(head[257:262]) == "ustar"
}

// writeArchive writes a docker-archive of staged blobs: the first is the
// config, the others the layers.
func (s *registryStore) writeArchive(ctx context.Context, w io.Writer, repo, tag string, config digest.Digest, blobs []struct {
	Digest digest.Digest
	Size   int64
}) error {
	name := func(d digest.Digest) string { return "blobs/" + d.Algorithm().String() + "/" + d.Encoded() }
	entry := map[string]any{"Config": name(config), "RepoTags": []string{imageref.Full(repo + ":" + tag)}}
	var layers []string
	for _, b := range blobs[1:] {
		layers = append(layers, name(b.Digest))
	}
	entry["Layers"] = layers
	manifest, err := json.Marshal([]any{entry})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "manifest.json", Mode: 0o644, Size: int64(len(manifest))}); err != nil {
		return err
	}
	if _, err := tw.Write(manifest); err != nil {
		return err
	}
	written := map[digest.Digest]bool{}
	for _, b := range blobs {
		if written[b.Digest] {
			continue
		}
		written[b.Digest] = true
		if err := s.copyBlob(ctx, tw, repo, name(b.Digest), b.Digest, b.Size); err != nil {
			return err
		}
	}
	return tw.Close()
}

func (s *registryStore) copyBlob(ctx context.Context, tw *tar.Writer, repo, name string, d digest.Digest, size int64) error {
	r, err := s.stage.OpenBlob(ctx, repo, d)
	if err != nil {
		return fmt.Errorf("blob %s: %w", d, err)
	}
	defer r.Close()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, r, size)
	return err
}

// DeleteManifest unstages d and untags the host's images of repo that
// are it.
func (s *registryStore) DeleteManifest(ctx context.Context, repo string, d digest.Digest) error {
	k := key(repo)
	m, err := s.stage.Manifest(ctx, k, d.String())
	if err != nil {
		return err
	}
	id := s.imageOf(ctx, k, m)
	repos, err := s.hostTags(ctx)
	if err != nil {
		return err
	}
	for tag, tagID := range repos[k] {
		if sameID(tagID, id) {
			if err := s.untag(ctx, k, tag); err != nil {
				return err
			}
		}
	}
	return s.stage.DeleteManifest(ctx, k, d)
}

// DeleteTag removes tag from the stage and from the host.
func (s *registryStore) DeleteTag(ctx context.Context, repo, tag string) error {
	k := key(repo)
	derr, serr := s.untag(ctx, k, tag), s.stage.DeleteTag(ctx, k, tag)
	for _, err := range []error{derr, serr} {
		if err != nil && !errors.Is(err, registry.ErrNotFound) {
			return err
		}
	}
	if derr != nil && serr != nil {
		return derr // neither had it
	}
	return nil
}

// untag removes repo:tag from the host (the image goes with its last tag
// unless a container uses it).
func (s *registryStore) untag(ctx context.Context, repo, tag string) error {
	err := s.h.RemoveImage(ctx, repo+":"+tag, true)
	if errdefs.IsNotFound(err) {
		return fmt.Errorf("%s:%s: %w", repo, tag, registry.ErrNotFound)
	}
	return err
}

// sameID reports whether two image IDs are one (with or without
// "sha256:", as runtimes write them).
func sameID(a, b string) bool {
	return a != "" && strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}

// hostTags maps each repository's tags in the host's store to their
// image IDs.
func (s *registryStore) hostTags(ctx context.Context) (map[string]map[string]string, error) {
	imgs, err := s.h.ListImages(ctx)
	if err != nil {
		return nil, err
	}
	repos := map[string]map[string]string{}
	for _, img := range imgs {
		for _, name := range img.Tags {
			if s.local != "" {
				name = strings.TrimPrefix(name, s.local+"/")
			}
			if r, t, ok := imageref.RepoTag(name); ok {
				if repos[r] == nil {
					repos[r] = map[string]string{}
				}
				repos[r][t] = img.ID
			}
		}
	}
	return repos, nil
}

// Tags are the host's tags of repo and the stage's.
func (s *registryStore) Tags(ctx context.Context, repo string) ([]string, error) {
	k := key(repo)
	repos, err := s.hostTags(ctx)
	if err != nil {
		return nil, err
	}
	tags := repos[k]
	staged, err := s.stage.Tags(ctx, k)
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return nil, err
	}
	if len(tags) == 0 && errors.Is(err, registry.ErrNotFound) {
		return nil, err
	}
	out := staged
	for t := range tags {
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Repositories are the host's and the stage's.
func (s *registryStore) Repositories(ctx context.Context) ([]string, error) {
	repos, err := s.hostTags(ctx)
	if err != nil {
		return nil, err
	}
	out, err := s.stage.Repositories(ctx)
	if err != nil {
		return nil, err
	}
	for r := range repos {
		out = append(out, r)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
