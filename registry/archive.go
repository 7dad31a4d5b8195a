package registry

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"

	"github.com/cornus-dev/cornus/internal/headwriter"
)

// Import puts the images of an image archive into a store, as a push of
// them would: a docker-archive (docker save's manifest.json, its layers
// as they are, config as written) or an OCI image layout (index.json and
// its blobs, copied byte for byte). Each name becomes a tag of its
// repository (app:1 is repository app's tag 1). It is the load path of a
// server whose backend has no image store of its own: the backend's
// nodes then pull what was loaded.
//
// f is read three times: for its small files, for its digests, and for
// the blobs themselves (a spooled upload, never held in memory).
func Import(ctx context.Context, s Store, f io.ReadSeeker) ([]Imported, error) {
	return importArchive(ctx, s, f, "")
}

// ImportAs is Import of an archive of one image, stored as name whatever
// the archive calls it (a runtime's export names images its own way:
// podman's localhost/app for app).
func ImportAs(ctx context.Context, s Store, f io.ReadSeeker, name string) (Imported, error) {
	got, err := importArchive(ctx, s, f, name)
	if err != nil {
		return Imported{}, err
	}
	return got[0], nil
}

func importArchive(ctx context.Context, s Store, f io.ReadSeeker, as string) ([]Imported, error) {
	a, err := scanArchive(f)
	if err != nil {
		return nil, err
	}
	var imgs []archiveImage
	switch {
	case as != "" && a.small["index.json"] != nil:
		imgs, err = a.ociImages(true) // the manifest as stored, byte for byte
	case a.small["manifest.json"] != nil:
		imgs, err = a.dockerImages()
	case a.small["index.json"] != nil:
		imgs, err = a.ociImages(false)
	default:
		err = errors.New("neither manifest.json (docker save) nor index.json (an OCI layout) is in it")
	}
	if err != nil {
		return nil, &ArchiveError{err}
	}
	if as != "" {
		if len(imgs) != 1 {
			return nil, &ArchiveError{fmt.Errorf("%d images in it, want one for %s", len(imgs), as)}
		}
		imgs[0].names = []string{as}
	}
	var out []Imported
	for _, img := range imgs {
		for _, name := range img.names {
			repo, tag, err := splitName(name)
			if err != nil {
				return nil, &ArchiveError{err}
			}
			if err := a.put(ctx, s, f, repo, tag, img); err != nil {
				return nil, fmt.Errorf("import %s: %w", name, err)
			}
			out = append(out, Imported{Name: name, Repo: repo, Tag: tag, Digest: img.top.Digest})
		}
	}
	return out, nil
}

// ArchiveError is an archive Import cannot read or use: the client's to
// fix. Other errors are the store's.
type ArchiveError struct{ Err error }

func (e *ArchiveError) Error() string { return "image archive: " + e.Err.Error() }
func (e *ArchiveError) Unwrap() error { return e.Err }

// Imported is one name an archive's image was stored under.
type Imported struct {
	Name, Repo, Tag string
	Digest          digest.Digest // the image's manifest
}

// splitName is a name's repository (its familiar form, as the registry's
// clients name it) and tag (latest when it has none).
func splitName(name string) (repo, tag string, err error) {
	n, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return "", "", fmt.Errorf("image name %q: %w", name, err)
	}
	if _, digested := n.(reference.Digested); digested {
		return "", "", fmt.Errorf("image name %q: a digest is not a tag to store it under", name)
	}
	return reference.FamiliarName(n), reference.TagNameOnly(n).(reference.Tagged).Tag(), nil
}

// archive is what scanArchive learnt of an image archive.
type archive struct {
	entries map[string]archiveEntry
	small   map[string][]byte // JSON and other small files, by name
}

type archiveEntry struct {
	size   int64
	digest digest.Digest
	head   []byte // its first bytes (the compression's magic)
}

// smallFile bounds the files scanArchive keeps, and smallTotal all of
// them together: manifests and configs, not layers.
const (
	smallFile  = 4 << 20
	smallTotal = 64 << 20
)

func scanArchive(f io.ReadSeeker) (*archive, error) {
	a := &archive{entries: map[string]archiveEntry{}, small: map[string][]byte{}}
	kept := 0
	err := eachEntry(f, func(name string, h *tar.Header, r io.Reader) error {
		sum := sha256.New()
		var head bytes.Buffer
		w := io.MultiWriter(sum, &headwriter.Writer{W: &head, N: 8})
		var keep *bytes.Buffer
		if h.Size <= smallFile && kept+int(h.Size) <= smallTotal {
			keep = &bytes.Buffer{}
			w = io.MultiWriter(w, keep)
			kept += int(h.Size)
		}
		if _, err := io.Copy(w, r); err != nil {
			return &ArchiveError{err}
		}
		a.entries[name] = archiveEntry{size: h.Size, digest: digest.NewDigest(digest.SHA256, sum), head: head.Bytes()}
		if keep != nil {
			a.small[name] = keep.Bytes()
		}
		return nil
	})
	return a, err
}

// eachEntry calls fn for each regular file of the tar in f (from its
// start), named as a relative, clean path.
func eachEntry(f io.ReadSeeker, fn func(name string, h *tar.Header, r io.Reader) error) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &ArchiveError{err}
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := fn(path.Clean(strings.TrimPrefix(h.Name, "./")), h, tr); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

// archiveImage is one image to store: its blobs (by the archive entry
// that holds each), the manifests below its top one (an index's), and
// the names it goes under.
type archiveImage struct {
	names    []string
	blobs    map[digest.Digest]string // digest → archive entry
	inline   map[digest.Digest][]byte // blobs made here (a docker-archive's config)
	children []Manifest
	top      Manifest
}

func (a *archive) dockerImages() ([]archiveImage, error) {
	var ms []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(a.small["manifest.json"], &ms); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	var out []archiveImage
	for _, m := range ms {
		if len(m.RepoTags) == 0 {
			continue // nothing to name it by
		}
		cfg, ok := a.small[path.Clean(m.Config)]
		if !ok {
			return nil, fmt.Errorf("manifest.json names config %s, which is not in the archive", m.Config)
		}
		img := archiveImage{names: m.RepoTags, blobs: map[digest.Digest]string{}, inline: map[digest.Digest][]byte{}}
		cd := digest.FromBytes(cfg)
		img.inline[cd] = cfg
		type desc struct {
			MediaType string        `json:"mediaType"`
			Digest    digest.Digest `json:"digest"`
			Size      int64         `json:"size"`
		}
		manifest := struct {
			SchemaVersion int    `json:"schemaVersion"`
			MediaType     string `json:"mediaType"`
			Config        desc   `json:"config"`
			Layers        []desc `json:"layers"`
		}{2, mediaDockerManifest, desc{"application/vnd.docker.container.image.v1+json", cd, int64(len(cfg))}, []desc{}}
		for _, l := range m.Layers {
			e, ok := a.entries[path.Clean(l)]
			if !ok {
				return nil, fmt.Errorf("manifest.json names layer %s, which is not in the archive", l)
			}
			img.blobs[e.digest] = path.Clean(l)
			manifest.Layers = append(manifest.Layers, desc{layerMediaType(e.head), e.digest, e.size})
		}
		data, err := json.Marshal(manifest)
		if err != nil {
			return nil, err
		}
		img.top = Manifest{MediaType: mediaDockerManifest, Digest: digest.FromBytes(data), Data: data}
		out = append(out, img)
	}
	return out, nil
}

// A docker-archive's image is stored as containerd's importer makes it
// (Docker's media types, fields in the same order), so the manifest
// digest is the one a node that imported the same archive has: one
// image, not two manifests of one config (which containerd 1.6's CRI
// mishandles).
const (
	mediaDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
)

// layerMediaType names a layer by its compression, as its first bytes
// show it (docker save writes them uncompressed), as containerd does.
func layerMediaType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "application/vnd.docker.image.rootfs.diff.tar.gzip"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "application/vnd.oci.image.layer.v1.tar+zstd"
	}
	return "application/vnd.docker.image.rootfs.diff.tar"
}

// ociImages are the images of an OCI layout's index.json that carry a
// name (all, with unnamed), each with every blob its manifest (or index)
// reaches.
func (a *archive) ociImages(unnamed bool) ([]archiveImage, error) {
	var idx struct {
		Manifests []struct {
			MediaType   string            `json:"mediaType"`
			Digest      digest.Digest     `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(a.small["index.json"], &idx); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	var out []archiveImage
	for _, m := range idx.Manifests {
		var names []string
		for _, k := range []string{"io.containerd.image.name", "org.opencontainers.image.ref.name"} {
			if v := m.Annotations[k]; v != "" && strings.ContainsAny(v, ":/") {
				names = append(names, v)
			}
		}
		if len(names) == 0 && !unnamed {
			continue
		}
		img := archiveImage{names: names[:min(len(names), 1)], blobs: map[digest.Digest]string{}}
		top, err := a.walkManifest(&img, m.MediaType, m.Digest, 0)
		if err != nil {
			return nil, err
		}
		img.top = top
		out = append(out, img)
	}
	return out, nil
}

// walkManifest records manifest d's blobs in img (an index's manifests
// go to img.children, deepest first) and returns it.
func (a *archive) walkManifest(img *archiveImage, mediaType string, d digest.Digest, depth int) (Manifest, error) {
	if err := d.Validate(); err != nil {
		return Manifest{}, fmt.Errorf("manifest digest %q: %w", d, err)
	}
	if depth > 4 {
		return Manifest{}, fmt.Errorf("manifest %s: indexes nest too deep", d)
	}
	name := "blobs/" + d.Algorithm().String() + "/" + d.Encoded()
	data, ok := a.small[name]
	if !ok || digest.FromBytes(data) != d {
		return Manifest{}, fmt.Errorf("manifest %s is not in the archive (or does not match its digest)", d)
	}
	var m struct {
		MediaType string
		Config    *struct{ Digest digest.Digest }
		Layers    []struct{ Digest digest.Digest }
		Manifests []struct {
			MediaType string
			Digest    digest.Digest
		}
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("manifest %s: %w", d, err)
	}
	mediaType = cmp.Or(m.MediaType, mediaType)
	for _, c := range m.Manifests {
		child, err := a.walkManifest(img, c.MediaType, c.Digest, depth+1)
		if err != nil {
			return Manifest{}, err
		}
		img.children = append(img.children, child)
	}
	var blobs []digest.Digest
	if m.Config != nil {
		blobs = append(blobs, m.Config.Digest)
	}
	for _, l := range m.Layers {
		blobs = append(blobs, l.Digest)
	}
	for _, b := range blobs {
		if b.Validate() != nil {
			return Manifest{}, fmt.Errorf("manifest %s names blob %q", d, b)
		}
		e := "blobs/" + b.Algorithm().String() + "/" + b.Encoded()
		if got, ok := a.entries[e]; !ok || got.digest != b {
			return Manifest{}, fmt.Errorf("manifest %s names blob %s, which is not in the archive (or does not match its digest)", d, b)
		}
		img.blobs[b] = e
	}
	return Manifest{MediaType: mediaType, Digest: d, Data: data}, nil
}

// put stores img in repo: its blobs, then its manifests, the top one
// tagged (a store checks a manifest's blobs are there).
func (a *archive) put(ctx context.Context, s Store, f io.ReadSeeker, repo, tag string, img archiveImage) error {
	for d, data := range img.inline {
		if err := s.PutBlob(ctx, repo, d, int64(len(data)), bytes.NewReader(data)); err != nil {
			return err
		}
	}
	want := map[string]digest.Digest{}
	for d, e := range img.blobs {
		if _, err := s.Blob(ctx, repo, d); err == nil {
			continue // there already
		}
		if err := s.LinkBlob(ctx, repo, d); err == nil {
			continue // stored for another repository
		}
		want[e] = d
	}
	if len(want) > 0 {
		err := eachEntry(f, func(name string, h *tar.Header, r io.Reader) error {
			d, ok := want[name]
			if !ok {
				return nil
			}
			delete(want, name)
			return s.PutBlob(ctx, repo, d, h.Size, r)
		})
		if err != nil {
			return err
		}
	}
	for _, m := range img.children {
		if err := s.PutManifest(ctx, repo, m); err != nil {
			return err
		}
	}
	return s.PutManifest(ctx, repo, img.top, tag)
}
