package dockerhost

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/internal/imageref"
	"github.com/cornus-dev/cornus/registry"
)

// The server's registry on this backend is dockerd's images. Dockerd's
// classic image store keeps no registry content (layers unpacked by its
// graph driver, and a config), so a staging store (registry.FSStore under
// the server's data directory) holds the blobs and manifests, and
// dockerd's images are the truth it follows:
//   - a manifest pushed with a tag is loaded into dockerd at once (a
//     docker-archive made from the staged blobs): the image runs with no
//     other load, its ID the manifest's config digest;
//   - a tag asked for that dockerd has is exported from it (docker save)
//     into the stage, unless the stage holds that very image already:
//     every image dockerd has can be pulled, its config (the image ID)
//     and layers byte for byte;
//   - what dockerd cannot hold (an artifact, a layer it cannot load) stays
//     in the stage only, and is served from there.
//
// Repository R's tag T is the image R:T as docker names it (app is
// docker.io/library/app).

// RegistryStore is the server registry's store on this backend, staging
// under dir.
func (b *Backend) RegistryStore(dir string) (registry.Store, error) {
	stage, err := registry.NewFSStore(dir)
	if err != nil {
		return nil, err
	}
	return &registryStore{b: b, stage: stage}, nil
}

type registryStore struct {
	b     *Backend
	stage *registry.FSStore
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

// Manifest serves a tag dockerd has as dockerd's image (exported into
// the stage when the stage lacks it), and anything else from the stage.
func (s *registryStore) Manifest(ctx context.Context, repo, ref string) (registry.Manifest, error) {
	k := key(repo)
	if _, err := digest.Parse(ref); err == nil {
		return s.stage.Manifest(ctx, k, ref)
	}
	res, err := s.b.cli.ImageInspect(ctx, k+":"+ref)
	if errdefs.IsNotFound(err) {
		return s.stage.Manifest(ctx, k, ref)
	}
	if err != nil {
		return registry.Manifest{}, wrap(err, "inspect image %s:%s", k, ref)
	}
	staged, err := s.stage.Manifest(ctx, k, ref)
	if err == nil && s.imageOf(ctx, k, staged) == res.ID {
		return staged, nil
	}
	if err := s.export(ctx, k, ref); err != nil {
		return registry.Manifest{}, err
	}
	m, err := s.stage.Manifest(ctx, k, ref)
	if err == nil && staged.Digest != "" && staged.Digest != m.Digest {
		_ = s.stage.DeleteManifest(ctx, k, staged.Digest) // what dockerd's tag named before
	}
	return m, err
}

// imageOf is the image ID dockerd would give a staged manifest: its
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

// export saves dockerd's repo:tag into the stage.
func (s *registryStore) export(ctx context.Context, repo, tag string) error {
	f, err := os.CreateTemp("", "cornus-registry-export-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	rc, err := s.b.cli.ImageSave(ctx, []string{repo + ":" + tag})
	if err != nil {
		return wrap(err, "export image %s:%s", repo, tag)
	}
	_, err = io.Copy(f, rc)
	rc.Close()
	if err != nil {
		return wrap(err, "export image %s:%s", repo, tag)
	}
	if _, err := registry.Import(ctx, s.stage, f); err != nil {
		return fmt.Errorf("export image %s:%s: %w", repo, tag, err)
	}
	return nil
}

// PutManifest stages m, and loads it into dockerd under each tag; what
// dockerd refuses (not an image, a layer it cannot read) stays staged.
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
// platform) into dockerd as repo:tag.
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
	blobs := []struct {
		Digest digest.Digest
		Size   int64
	}{{doc.Config.Digest, doc.Config.Size}}
	blobs = append(blobs, doc.Layers...)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.writeArchive(ctx, pw, repo, tag, blobs[0].Digest, blobs)) }()
	_, err := s.b.LoadImage(ctx, pr)
	pr.CloseWithError(err)
	return err
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

// DeleteManifest unstages d and untags dockerd's images of repo that
// are it.
func (s *registryStore) DeleteManifest(ctx context.Context, repo string, d digest.Digest) error {
	k := key(repo)
	m, err := s.stage.Manifest(ctx, k, d.String())
	if err != nil {
		return err
	}
	id := s.imageOf(ctx, k, m)
	tags, err := s.dockerTags(ctx, k)
	if err != nil {
		return err
	}
	for tag, tagID := range tags {
		if tagID == id {
			if err := s.untag(ctx, k, tag); err != nil {
				return err
			}
		}
	}
	return s.stage.DeleteManifest(ctx, k, d)
}

// DeleteTag removes tag from the stage and from dockerd.
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

// untag removes repo:tag from dockerd (the image goes with its last tag
// unless a container uses it).
func (s *registryStore) untag(ctx context.Context, repo, tag string) error {
	_, err := s.b.cli.ImageRemove(ctx, repo+":"+tag, client.ImageRemoveOptions{Force: true})
	if errdefs.IsNotFound(err) {
		return fmt.Errorf("%s:%s: %w", repo, tag, registry.ErrNotFound)
	}
	return wrap(err, "untag image %s:%s", repo, tag)
}

// dockerTags maps repo's tags in dockerd to their image IDs.
func (s *registryStore) dockerTags(ctx context.Context, repo string) (map[string]string, error) {
	res, err := s.b.cli.ImageList(ctx, client.ImageListOptions{})
	if err != nil {
		return nil, wrap(err, "list images")
	}
	tags := map[string]string{}
	for _, img := range res.Items {
		for _, name := range img.RepoTags {
			if r, t, ok := imageref.RepoTag(name); ok && (repo == "" || r == repo) {
				tags[r+":"+t] = img.ID
			}
		}
	}
	if repo == "" {
		return tags, nil
	}
	out := map[string]string{}
	for rt, id := range tags {
		out[rt[len(repo)+1:]] = id
	}
	return out, nil
}

// Tags are dockerd's tags of repo and the stage's.
func (s *registryStore) Tags(ctx context.Context, repo string) ([]string, error) {
	k := key(repo)
	tags, err := s.dockerTags(ctx, k)
	if err != nil {
		return nil, err
	}
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

// Repositories are dockerd's and the stage's.
func (s *registryStore) Repositories(ctx context.Context) ([]string, error) {
	tags, err := s.dockerTags(ctx, "")
	if err != nil {
		return nil, err
	}
	out, err := s.stage.Repositories(ctx)
	if err != nil {
		return nil, err
	}
	for rt := range tags {
		r, _, _ := imageref.RepoTag(rt)
		out = append(out, r)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
