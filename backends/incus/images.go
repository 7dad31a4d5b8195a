package incus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// aliasOf is the Incus image alias cornus gives a reference: its short
// (familiar) form with a tag, e.g. cornus-test/busybox:2 or
// busybox:latest.
func aliasOf(ref string) (string, error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %v: %w", ref, err, errdefs.ErrInvalidArgument)
	}
	return reference.FamiliarString(reference.TagNameOnly(n)), nil
}

// imageByRef finds the image an alias names; NotFound says how to load it.
func (b *Backend) imageByRef(ctx context.Context, ref string) (image, error) {
	alias, err := aliasOf(ref)
	if err != nil {
		return image{}, err
	}
	var a imageAlias
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/images/aliases/" + url.PathEscape(alias)}, &a); err != nil {
		if errdefs.IsNotFound(err) {
			return image{}, fmt.Errorf("image %s: no such image in incus (bring it in with `cornus image load -i FILE.tar`): %w", ref, errdefs.ErrNotFound)
		}
		return image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	var img image
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/images/" + url.PathEscape(a.Target)}, &img); err != nil {
		return image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	return img, nil
}

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	img, err := b.imageByRef(ctx, ref)
	if err != nil {
		return backends.Image{}, err
	}
	return imageOf(img), nil
}

// ListImages lists the images with aliases (the ones cornus loaded and
// any other Incus image).
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	var imgs []image
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/images", query: url.Values{"recursion": {"1"}}}, &imgs); err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	out := make([]backends.Image, 0, len(imgs))
	for _, img := range imgs {
		out = append(out, imageOf(img))
	}
	return out, nil
}

// RemoveImage removes an image's alias, and the image once no alias is
// left.
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	img, err := b.imageByRef(ctx, ref)
	if err != nil {
		return err
	}
	alias, _ := aliasOf(ref)
	if err := b.cli.call(ctx, request{method: "DELETE", path: "/1.0/images/aliases/" + url.PathEscape(alias)}, nil); err != nil {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	if len(img.Aliases) > 1 {
		return nil
	}
	if err := b.cli.call(ctx, request{method: "DELETE", path: "/1.0/images/" + url.PathEscape(img.Fingerprint)}, nil); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	return nil
}

// imageOf renders an Incus image as cornus's; the image config comes
// from the property cornus stored when it converted the image.
func imageOf(img image) backends.Image {
	out := backends.Image{ID: img.Fingerprint, Size: img.Size, Created: img.CreatedAt, LastTagged: img.UploadedAt,
		Architecture: img.Architecture, OS: "linux"}
	if id := img.Properties[propID]; id != "" {
		out.ID = id
	}
	for _, a := range img.Aliases {
		out.Tags = append(out.Tags, a.Name)
	}
	cfg, ok := configOf(img)
	if !ok {
		return out
	}
	c := cfg.Config
	out.Entrypoint, out.Cmd, out.Env, out.WorkingDir, out.User, out.Labels = c.Entrypoint, c.Cmd, c.Env, c.WorkingDir, c.User, c.Labels
	if !cfg.Created.IsZero() {
		out.Created = cfg.Created
	}
	out.Architecture = cmpOr(cfg.Architecture, out.Architecture)
	for p := range c.ExposedPorts {
		out.ExposedPorts = append(out.ExposedPorts, p)
	}
	slices.Sort(out.ExposedPorts)
	if h := c.Healthcheck; h != nil {
		hc := &spec.Healthcheck{Test: h.Test}
		if h.Interval > 0 {
			hc.Interval = spec.DurationOf(h.Interval)
		}
		if h.Timeout > 0 {
			hc.Timeout = spec.DurationOf(h.Timeout)
		}
		if h.StartPeriod > 0 {
			hc.StartPeriod = spec.DurationOf(h.StartPeriod)
		}
		if h.StartInterval > 0 {
			hc.StartInterval = spec.DurationOf(h.StartInterval)
		}
		if h.Retries > 0 {
			r := h.Retries
			hc.Retries = &r
		}
		out.Healthcheck = hc
	}
	return out
}

func configOf(img image) (imageConfig, bool) {
	var cfg imageConfig
	raw := img.Properties[propConfig]
	if raw == "" || json.Unmarshal([]byte(raw), &cfg) != nil {
		return cfg, false
	}
	return cfg, true
}

// LoadImage imports a docker-archive or OCI-layout tar: each image is
// converted to an Incus unified tarball (layers flattened, whiteouts
// applied) and uploaded once; an image Incus already holds (same image
// ID) only gets its tags as aliases, with no conversion.
func (b *Backend) LoadImage(ctx context.Context, r io.Reader) ([]string, error) {
	if err := os.MkdirAll(b.cfg.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	tmp, err := os.MkdirTemp(b.cfg.dataDir, "load-")
	if err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if err := unpackArchive(r, src); err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	imgs, err := readImages(src)
	if err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	var have []image
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/images", query: url.Values{"recursion": {"1"}}}, &have); err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	var refs []string
	for _, img := range imgs {
		fp := ""
		for _, h := range have {
			if h.Properties[propID] == img.ID() {
				fp = h.Fingerprint
			}
		}
		if fp == "" {
			if fp, err = b.upload(ctx, img, tmp); err != nil {
				return refs, err
			}
		}
		for _, tag := range sortedTags(img.Tags) {
			alias, err := aliasOf(tag)
			if err != nil {
				return refs, fmt.Errorf("load image: %w", err)
			}
			if err := b.setAlias(ctx, alias, fp); err != nil {
				return refs, fmt.Errorf("load image %s: %w", tag, err)
			}
			refs = append(refs, alias)
		}
		if len(img.Tags) == 0 {
			refs = append(refs, img.ID())
		}
	}
	return refs, nil
}

// upload converts one image and uploads it; it returns the fingerprint.
func (b *Backend) upload(ctx context.Context, img sourceImage, tmp string) (string, error) {
	var cfg imageConfig
	if err := json.Unmarshal(img.Config, &cfg); err != nil {
		return "", fmt.Errorf("load image %s: config: %v: %w", img.ID(), err, errdefs.ErrInvalidArgument)
	}
	meta, err := metadataYAML(img, cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(tmp, "unified.tar")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if err := flatten(img, meta, io.MultiWriter(f, h)); err != nil {
		return "", fmt.Errorf("load image %s: convert: %w", strings.Join(img.Tags, ", "), err)
	}
	fp := hex.EncodeToString(h.Sum(nil))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	hdr := http.Header{"Content-Type": {"application/octet-stream"}}
	err = b.cli.call(ctx, request{method: "POST", path: "/1.0/images", body: f, header: hdr}, nil)
	if err != nil && !errdefs.IsConflict(err) {
		return "", fmt.Errorf("load image %s: upload to incus: %w", strings.Join(img.Tags, ", "), err)
	}
	return fp, nil
}

// setAlias points alias at the image fp, creating or moving it.
func (b *Backend) setAlias(ctx context.Context, alias, fp string) error {
	err := b.cli.call(ctx, request{method: "POST", path: "/1.0/images/aliases", body: imageAlias{Name: alias, Target: fp}}, nil)
	if err == nil || !errdefs.IsConflict(err) {
		return err
	}
	return b.cli.call(ctx, request{method: "PUT", path: "/1.0/images/aliases/" + url.PathEscape(alias), body: map[string]string{"target": fp}}, nil)
}
