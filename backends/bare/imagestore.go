package bare

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/images/archive"
	"github.com/containerd/containerd/v2/plugins/content/local"
	"github.com/containerd/errdefs"
	"github.com/containerd/log"
	"github.com/containerd/platforms"
	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sirupsen/logrus"
)

// imageStore is the in-process image store under <data>/bare/images:
// blobs in a containerd content store (content/), names in names.json
// (name → manifest or index descriptor), changed under the flock on
// names.lock so several cornus processes agree; content.lock keeps a
// removal's collection apart from loads and pulls (useContent). Layers
// are unpacked separately (snapshot.go).
type imageStore struct {
	dir     string
	content content.Store
}

// imageName is one name's entry.
type imageName struct {
	Name    string             `json:"name"`
	Target  ocispec.Descriptor `json:"target"`
	Updated time.Time          `json:"updated"`
}

func openImageStore(dir string) (*imageStore, error) {
	// The store warns on every open where the filesystem has no fs-verity
	// (most): a check whose answer is not ours to act on, and not the
	// user's to read on every command.
	lvl := log.L.Logger.GetLevel()
	log.L.Logger.SetLevel(logrus.ErrorLevel)
	cs, err := local.NewStore(filepath.Join(dir, "content"))
	log.L.Logger.SetLevel(lvl)
	if err != nil {
		return nil, fmt.Errorf("image store %s: %w", dir, err)
	}
	return &imageStore{dir: dir, content: cs}, nil
}

// resolved is an image read from the store: its manifest and config for
// this host's platform.
type resolved struct {
	name     imageName
	manifest ocispec.Manifest
	configID digest.Digest
	config   ocispec.Image
	onBuild  []string
}

// lock takes the names lock; the returned func releases it.
func (s *imageStore) lock() (func(), error) {
	return s.flock("names.lock", syscall.LOCK_EX)
}

// useContent takes the content lock: shared by loads and pulls for their
// whole run, since they write blobs (and unpack layers) before a name
// reaches them; exclusive by a removal, whose collection deletes what no
// name reaches. Take it before the names lock.
func (s *imageStore) useContent(exclusive bool) (func(), error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	unlock, err := s.flock("content.lock", how)
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	return unlock, nil
}

// flock takes a flock on a file of the store (several cornus processes
// share it); the returned func releases it.
func (s *imageStore) flock(name string, how int) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (s *imageStore) names() (map[string]imageName, error) {
	out := map[string]imageName{}
	data, err := os.ReadFile(filepath.Join(s.dir, "names.json"))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("image store: names.json: %w", err)
	}
	return out, nil
}

func (s *imageStore) writeNames(m map[string]imageName) error {
	return localstore.WriteJSON(filepath.Join(s.dir, "names.json"), m)
}

// importTar reads a docker-archive or OCI-layout tar into the content
// store and names the images it holds; it returns the full names.
func (s *imageStore) importTar(ctx context.Context, r io.Reader) ([]string, error) {
	index, err := archive.ImportIndex(ctx, s.content, r)
	if err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	data, err := content.ReadBlob(ctx, s.content, index)
	if err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("load image: index: %w", err)
	}
	var add []imageName
	for _, m := range idx.Manifests {
		name := m.Annotations[images.AnnotationImageName]
		if name == "" {
			name = m.Annotations[ocispec.AnnotationRefName]
		}
		if name == "" {
			continue
		}
		if full, err := daemonless.Normalize(name); err == nil {
			name = full
		}
		add = append(add, imageName{Name: name, Target: m, Updated: time.Now().UTC()})
	}
	if len(add) == 0 {
		return nil, fmt.Errorf("load image: the archive names no image (no RepoTags or org.opencontainers.image.ref.name): %w", errdefs.ErrInvalidArgument)
	}
	if err := s.setNames(add...); err != nil {
		return nil, err
	}
	var out []string
	for _, a := range add {
		out = append(out, a.Name)
	}
	return out, nil
}

// setNames points names at their targets.
func (s *imageStore) setNames(add ...imageName) error {
	unlock, err := s.lock()
	if err != nil {
		return fmt.Errorf("image store: %w", err)
	}
	defer unlock()
	m, err := s.names()
	if err != nil {
		return err
	}
	for _, a := range add {
		m[a.Name] = a
	}
	return s.writeNames(m)
}

// get resolves a full name, an image ID (config digest) or a unique ID
// prefix.
func (s *imageStore) get(ctx context.Context, ref string) (resolved, error) {
	m, err := s.names()
	if err != nil {
		return resolved{}, err
	}
	if full, err := daemonless.Normalize(ref); err == nil {
		if n, ok := m[full]; ok {
			return s.resolve(ctx, n)
		}
	}
	id := strings.TrimPrefix(ref, "sha256:")
	if len(id) >= 4 && isHex(id) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			r, err := s.resolve(ctx, m[name])
			if err == nil && strings.HasPrefix(r.configID.Encoded(), id) {
				return r, nil
			}
		}
	}
	return resolved{}, fmt.Errorf("image %s: no such image in the bare backend's store (load it with cornus image load -i FILE.tar): %w", ref, errdefs.ErrNotFound)
}

// resolve reads a name's manifest and config for this platform.
func (s *imageStore) resolve(ctx context.Context, n imageName) (resolved, error) {
	mf, err := images.Manifest(ctx, s.content, n.Target, platforms.Default())
	if err != nil {
		return resolved{}, fmt.Errorf("image %s: manifest: %w", n.Name, err)
	}
	data, err := content.ReadBlob(ctx, s.content, mf.Config)
	if err != nil {
		return resolved{}, fmt.Errorf("image %s: config: %w", n.Name, err)
	}
	var cfg ocispec.Image
	if err := json.Unmarshal(data, &cfg); err != nil {
		return resolved{}, fmt.Errorf("image %s: config: %w", n.Name, err)
	}
	if len(cfg.RootFS.DiffIDs) != len(mf.Layers) {
		return resolved{}, fmt.Errorf("image %s: %d layers but %d diff IDs: %w", n.Name, len(mf.Layers), len(cfg.RootFS.DiffIDs), errdefs.ErrDataLoss)
	}
	return resolved{name: n, manifest: mf, configID: mf.Config.Digest, config: cfg, onBuild: backends.OnBuildOf(data)}, nil
}

// remove drops a name; with the last name of an image its blobs go too,
// unless a container still uses it (inUse lists image IDs in use).
func (s *imageStore) remove(ctx context.Context, ref string, inUse map[digest.Digest]bool, force bool) error {
	r, err := s.get(ctx, ref)
	if err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.names()
	if err != nil {
		return err
	}
	if inUse[r.configID] && !force {
		return fmt.Errorf("remove image %s: a container uses it (remove the container first, or force): %w", ref, errdefs.ErrConflict)
	}
	delete(m, r.name.Name)
	if err := s.writeNames(m); err != nil {
		return err
	}
	return s.collect(ctx, m)
}

// collect deletes the blobs no name reaches.
func (s *imageStore) collect(ctx context.Context, m map[string]imageName) error {
	keep := map[digest.Digest]bool{}
	for _, n := range m {
		_ = images.Walk(ctx, images.HandlerFunc(func(ctx context.Context, d ocispec.Descriptor) ([]ocispec.Descriptor, error) {
			keep[d.Digest] = true
			children, err := images.Children(ctx, s.content, d)
			if errdefs.IsNotFound(err) {
				return nil, nil
			}
			return children, err
		}), n.Target)
	}
	var drop []digest.Digest
	if err := s.content.Walk(ctx, func(i content.Info) error {
		if !keep[i.Digest] {
			drop = append(drop, i.Digest)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, d := range drop {
		if err := s.content.Delete(ctx, d); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// size is the sum of an image's compressed blobs.
func (r resolved) size() int64 {
	n := r.manifest.Config.Size
	for _, l := range r.manifest.Layers {
		n += l.Size
	}
	return n
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
