package incus

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/plugins/content/local"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
)

var _ backends.ImageContenter = (*Backend)(nil)

// ImageContent hands out an image as OCI content. Incus keeps images as
// root file systems, not layers: the image is one layer made of its
// exported rootfs, with the config cornus stored when it loaded it. The
// result is kept by fingerprint in a content store under the data
// directory, so each image is converted once.
func (b *Backend) ImageContent(ctx context.Context, ref string) (backends.ImageContent, error) {
	img, err := b.imageByRef(ctx, ref)
	if err != nil {
		return backends.ImageContent{}, err
	}
	dir := filepath.Join(b.cfg.dataDir, "content")
	unlock, err := lockDir(dir)
	if err != nil {
		return backends.ImageContent{}, err
	}
	defer unlock()
	cs, err := local.NewStore(dir)
	if err != nil {
		return backends.ImageContent{}, fmt.Errorf("image %s: content store: %w", ref, err)
	}
	index := filepath.Join(dir, "manifests", img.Fingerprint+".json")
	if data, err := os.ReadFile(index); err == nil {
		var desc ocispec.Descriptor
		if json.Unmarshal(data, &desc) == nil {
			if _, err := cs.Info(ctx, desc.Digest); err == nil {
				return backends.ImageContent{Store: cs, Target: desc, Release: func() {}}, nil
			}
		}
	}
	desc, err := b.convertToOCI(ctx, cs, img)
	if err != nil {
		return backends.ImageContent{}, fmt.Errorf("image %s: %w", ref, err)
	}
	data, _ := json.Marshal(desc)
	if err := os.MkdirAll(filepath.Dir(index), 0o700); err != nil {
		return backends.ImageContent{}, err
	}
	if err := os.WriteFile(index, data, 0o600); err != nil {
		return backends.ImageContent{}, err
	}
	return backends.ImageContent{Store: cs, Target: desc, Release: func() {}}, nil
}

// convertToOCI writes img as a one-layer OCI image into cs and returns
// its manifest's descriptor.
func (b *Backend) convertToOCI(ctx context.Context, cs content.Store, img image) (ocispec.Descriptor, error) {
	resp, err := b.cli.raw(ctx, request{method: "GET", path: "/1.0/images/" + url.PathEscape(img.Fingerprint) + "/export"})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("export from incus: %w", err)
	}
	defer resp.Body.Close()
	layer, err := writeBlob(ctx, cs, ocispec.MediaTypeImageLayer, func(w io.Writer) error { return rootfsLayer(resp.Body, w) })
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("rootfs layer: %w", err)
	}
	cfg := map[string]any{}
	if raw := img.Properties[propConfig]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("stored config: %v: %w", err, errdefs.ErrDataLoss)
		}
	}
	cfg["architecture"], cfg["os"] = cmpOr(img.Architecture, "amd64"), "linux"
	cfg["rootfs"] = ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{layer.Digest}}
	delete(cfg, "history") // one layer now: the old history would not match it
	cfgDesc, err := writeJSONBlob(ctx, cs, ocispec.MediaTypeImageConfig, cfg)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	mf := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cfgDesc, Layers: []ocispec.Descriptor{layer}}
	mf.SchemaVersion = 2
	return writeJSONBlob(ctx, cs, ocispec.MediaTypeImageManifest, mf)
}

// rootfsLayer copies the rootfs/ entries of an Incus unified tarball to
// w as a layer tar (rootfs/ stripped; metadata and templates left out).
func rootfsLayer(r io.Reader, w io.Writer) error {
	tr := tar.NewReader(r)
	tw := tar.NewWriter(w)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		name, ok := strings.CutPrefix(strings.TrimPrefix(hdr.Name, "./"), "rootfs/")
		if !ok || name == "" {
			continue
		}
		hdr.Name = name
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = strings.TrimPrefix(strings.TrimPrefix(hdr.Linkname, "./"), "rootfs/")
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}

func writeJSONBlob(ctx context.Context, cs content.Store, mediaType string, v any) (ocispec.Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	return writeBlob(ctx, cs, mediaType, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// writeBlob writes what fill writes into cs, under its digest.
func writeBlob(ctx context.Context, cs content.Store, mediaType string, fill func(io.Writer) error) (ocispec.Descriptor, error) {
	f, err := os.CreateTemp("", "cornus-blob-")
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	dg := digest.Canonical.Digester()
	if err := fill(io.MultiWriter(f, dg.Hash())); err != nil {
		return ocispec.Descriptor{}, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc := ocispec.Descriptor{MediaType: mediaType, Digest: dg.Digest(), Size: size}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := content.WriteBlob(ctx, cs, desc.Digest.String(), f, desc); err != nil && !errdefs.IsAlreadyExists(err) {
		return ocispec.Descriptor{}, err
	}
	return desc, nil
}

// lockDir takes an exclusive flock on dir's lock file: one conversion at
// a time across cornus processes.
func lockDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
