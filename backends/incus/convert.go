package incus

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"go.yaml.in/yaml/v3"
)

// Limits on what an image archive may hold.
const (
	maxManifestBytes = 4 << 20   // manifest.json, index.json, a manifest or config blob
	maxArchiveBytes  = 64 << 30  // the whole image tar
	maxEntries       = 2_000_000 // entries across an image's layers
)

// sourceImage is one image of a loaded archive: its tags, config blob and
// layer files (in order, possibly compressed), in the directory the
// archive was unpacked to.
type sourceImage struct {
	Tags   []string
	Config []byte
	Layers []string
}

// ID is the image ID Docker gives it: the digest of its config.
func (s sourceImage) ID() string {
	sum := sha256.Sum256(s.Config)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// imageConfig is the subset of an OCI/Docker image config cornus reads.
type imageConfig struct {
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Created      time.Time `json:"created"`
	Config       struct {
		User         string              `json:"User,omitempty"`
		Env          []string            `json:"Env,omitempty"`
		Entrypoint   []string            `json:"Entrypoint,omitempty"`
		Cmd          []string            `json:"Cmd,omitempty"`
		WorkingDir   string              `json:"WorkingDir,omitempty"`
		Labels       map[string]string   `json:"Labels,omitempty"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
		StopSignal   string              `json:"StopSignal,omitempty"`
		Healthcheck  *struct {
			Test          []string      `json:"Test,omitempty"`
			Interval      time.Duration `json:"Interval,omitempty"`
			Timeout       time.Duration `json:"Timeout,omitempty"`
			StartPeriod   time.Duration `json:"StartPeriod,omitempty"`
			StartInterval time.Duration `json:"StartInterval,omitempty"`
			Retries       int           `json:"Retries,omitempty"`
		} `json:"Healthcheck,omitempty"`
	} `json:"config"`
}

// unpackArchive writes the entries of an image tar (docker-archive or
// OCI layout) to dir, regular files and directories only, never outside
// dir.
func unpackArchive(r io.Reader, dir string) error {
	tr := tar.NewReader(&io.LimitedReader{R: r, N: maxArchiveBytes})
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read image archive: %v: %w", err, errdefs.ErrInvalidArgument)
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if name == "" {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("read image archive: %w", err)
			}
		case tar.TypeSymlink:
			// docker save links repeated layers; resolve them inside dir.
			link := strings.TrimPrefix(path.Clean(path.Join(path.Dir("/"+name), hdr.Linkname)), "/")
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(link)))
			if err != nil {
				return fmt.Errorf("image archive: %s links to %s, which comes later or is missing: %w", hdr.Name, hdr.Linkname, errdefs.ErrInvalidArgument)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(target, data, 0o600); err != nil {
				return err
			}
		}
	}
}

// readImages finds the images in an unpacked archive: manifest.json
// (docker save) first, else index.json (OCI layout).
func readImages(dir string) ([]sourceImage, error) {
	if data, err := readLimited(filepath.Join(dir, "manifest.json")); err == nil {
		var ms []struct {
			Config   string
			RepoTags []string
			Layers   []string
		}
		if err := json.Unmarshal(data, &ms); err != nil {
			return nil, fmt.Errorf("image archive: manifest.json: %v: %w", err, errdefs.ErrInvalidArgument)
		}
		var out []sourceImage
		for _, m := range ms {
			cfg, err := readLimited(inside(dir, m.Config))
			if err != nil {
				return nil, fmt.Errorf("image archive: config %s: %w", m.Config, err)
			}
			img := sourceImage{Tags: m.RepoTags, Config: cfg}
			for _, l := range m.Layers {
				img.Layers = append(img.Layers, inside(dir, l))
			}
			out = append(out, img)
		}
		return out, nil
	}
	data, err := readLimited(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, fmt.Errorf("image archive: neither manifest.json (docker save) nor index.json (OCI layout) found: %w", errdefs.ErrInvalidArgument)
	}
	return readOCIIndex(dir, data)
}

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
}

func readOCIIndex(dir string, data []byte) ([]sourceImage, error) {
	var idx struct {
		Manifests []ociDescriptor `json:"manifests"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("image archive: index.json: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	var out []sourceImage
	for _, d := range idx.Manifests {
		blob, err := readLimited(blobPath(dir, d.Digest))
		if err != nil {
			return nil, fmt.Errorf("image archive: manifest %s: %w", d.Digest, err)
		}
		var m struct {
			MediaType string          `json:"mediaType"`
			Manifests []ociDescriptor `json:"manifests"`
			Config    ociDescriptor   `json:"config"`
			Layers    []ociDescriptor `json:"layers"`
		}
		if err := json.Unmarshal(blob, &m); err != nil {
			return nil, fmt.Errorf("image archive: manifest %s: %v: %w", d.Digest, err, errdefs.ErrInvalidArgument)
		}
		if len(m.Manifests) > 0 { // an index: take this host's platform
			sub, err := readOCIIndex(dir, pickPlatform(blob))
			if err != nil {
				return nil, err
			}
			for i := range sub {
				sub[i].Tags = append(sub[i].Tags, tagsOf(d)...)
			}
			out = append(out, sub...)
			continue
		}
		cfg, err := readLimited(blobPath(dir, m.Config.Digest))
		if err != nil {
			return nil, fmt.Errorf("image archive: config %s: %w", m.Config.Digest, err)
		}
		img := sourceImage{Tags: tagsOf(d), Config: cfg}
		for _, l := range m.Layers {
			img.Layers = append(img.Layers, blobPath(dir, l.Digest))
		}
		out = append(out, img)
	}
	return out, nil
}

// pickPlatform narrows an image index to its linux/amd64 manifests.
func pickPlatform(index []byte) []byte {
	var idx struct {
		Manifests []struct {
			ociDescriptor
			Platform struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	_ = json.Unmarshal(index, &idx)
	var keep []ociDescriptor
	for _, m := range idx.Manifests {
		if (m.Platform.OS == "" || m.Platform.OS == "linux") && (m.Platform.Architecture == "" || m.Platform.Architecture == "amd64") {
			keep = append(keep, m.ociDescriptor)
			break
		}
	}
	data, _ := json.Marshal(map[string]any{"manifests": keep})
	return data
}

func tagsOf(d ociDescriptor) []string {
	for _, k := range []string{"io.containerd.image.name", "org.opencontainers.image.ref.name"} {
		if v := d.Annotations[k]; v != "" && (k != "org.opencontainers.image.ref.name" || strings.ContainsAny(v, ":/")) {
			return []string{v}
		}
	}
	return nil
}

func blobPath(dir, digest string) string {
	algo, hexd, _ := strings.Cut(digest, ":")
	return inside(dir, path.Join("blobs", algo, hexd))
}

// inside is name resolved below dir, never outside it.
func inside(dir, name string) string {
	return filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path.Clean("/"+name), "/")))
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes: %w", filepath.Base(p), maxManifestBytes, errdefs.ErrInvalidArgument)
	}
	return data, nil
}

// layerEntry says which layer holds a path's final version: the n-th
// entry of layer l.
type layerEntry struct{ l, n int }

// flatten writes the image as an Incus unified tarball (metadata.yaml
// and rootfs/) to w: the layers applied in order, whiteouts (.wh.NAME,
// .wh..wh..opq) removing what lower layers had.
func flatten(img sourceImage, meta []byte, w io.Writer) error {
	final, err := finalEntries(img)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := writeSkeleton(tw, meta, final); err != nil {
		return err
	}
	for l, layer := range img.Layers {
		n := 0
		err := eachEntry(layer, func(hdr *tar.Header, body io.Reader) error {
			n++
			p := entryPath(hdr.Name)
			if e, ok := final[p]; !ok || e != (layerEntry{l, n}) {
				return nil
			}
			out := *hdr
			out.Name = "rootfs/" + p
			if hdr.Typeflag == tar.TypeDir {
				out.Name += "/"
			}
			if hdr.Typeflag == tar.TypeLink {
				out.Linkname = "rootfs/" + entryPath(hdr.Linkname)
			}
			out.Format = tar.FormatPAX
			if err := tw.WriteHeader(&out); err != nil {
				return err
			}
			if hdr.Typeflag == tar.TypeReg {
				_, err := io.Copy(tw, body)
				return err
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("image layer %d: %w", l+1, err)
		}
	}
	return tw.Close()
}

// finalEntries finds, for each path, the layer entry the image ends with:
// the last one written, unless a whiteout in a higher layer removed it.
func finalEntries(img sourceImage) (map[string]layerEntry, error) {
	final := map[string]layerEntry{}
	for l, layer := range img.Layers {
		n := 0
		err := eachEntry(layer, func(hdr *tar.Header, _ io.Reader) error {
			n++
			if n > maxEntries {
				return fmt.Errorf("more than %d entries: %w", maxEntries, errdefs.ErrInvalidArgument)
			}
			p := entryPath(hdr.Name)
			if p == "" {
				return nil
			}
			dir, base := path.Split(p)
			dir = strings.TrimSuffix(dir, "/")
			switch {
			case base == ".wh..wh..opq":
				removeBelow(final, dir, l, false)
			case strings.HasPrefix(base, ".wh."):
				removeBelow(final, path.Join(dir, strings.TrimPrefix(base, ".wh.")), l, true)
			default:
				final[p] = layerEntry{l, n}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("image layer %d: %w", l+1, err)
		}
	}
	return final, nil
}

// writeSkeleton writes metadata.yaml, rootfs/ and the directories LXC
// mounts on where the image has none.
func writeSkeleton(tw *tar.Writer, meta []byte, final map[string]layerEntry) error {
	now := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Name: "metadata.yaml", Mode: 0o644, Size: int64(len(meta)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(meta); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "rootfs/", Mode: 0o755, ModTime: now, Typeflag: tar.TypeDir}); err != nil {
		return err
	}
	// What LXC mounts on, where the image has none.
	for _, d := range []string{"dev", "proc", "sys", "tmp", "etc", "run", "root"} {
		if _, ok := final[d]; ok {
			continue
		}
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: "rootfs/" + d + "/", Mode: mode, ModTime: now, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	return nil
}

// entryPath is a layer entry's path, relative, cleaned ("" for the root).
func entryPath(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// removeBelow deletes p's subtree (and p itself when self) as lower
// layers (< l) left it.
func removeBelow(final map[string]layerEntry, p string, l int, self bool) {
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	for k, e := range final {
		if e.l < l && ((self && k == p) || strings.HasPrefix(k, prefix)) {
			delete(final, k)
		}
	}
}

// eachEntry calls fn for every entry of a layer file (plain or gzip).
func eachEntry(layer string, fn func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(layer)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(4)
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return fmt.Errorf("zstd-compressed layers are not supported yet (export the image with docker save, which writes plain layers): %w", errdefs.ErrNotImplemented)
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(hdr, tr); err != nil {
			return err
		}
	}
}

// Image properties cornus sets on the images it converts.
const (
	propID     = "cornus.id"     // the Docker image ID (config digest)
	propConfig = "cornus.config" // the image config, JSON
)

// metadataYAML is the unified tarball's metadata.yaml for an image.
func metadataYAML(img sourceImage, cfg imageConfig) ([]byte, error) {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "arm": "armv7l", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}[cfg.Architecture]
	if arch == "" {
		arch = "x86_64"
	}
	created := cfg.Created.Unix()
	if created <= 0 {
		created = 1 // Incus refuses 0 ("missing creation date")
	}
	desc := strings.Join(img.Tags, ", ")
	if desc == "" {
		desc = img.ID()
	}
	m := map[string]any{
		"architecture":  arch,
		"creation_date": created,
		"properties": map[string]string{
			"description": desc, "os": cmpOr(cfg.OS, "linux"), "type": "oci",
			propID: img.ID(), propConfig: string(img.Config),
		},
		"templates": map[string]any{},
	}
	return yaml.Marshal(m)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sortedTags are an image's tags without duplicates.
func sortedTags(tags []string) []string {
	out := slices.Clone(tags)
	slices.Sort(out)
	return slices.Compact(out)
}
