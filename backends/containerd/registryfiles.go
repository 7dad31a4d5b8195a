package containerd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The registry's fast paths where cornus serve runs beside its
// containerd: blobs read and committed as files of containerd's content
// store, not through its API.

// blobFile opens blob d in containerd's content store directly, where
// this host can read it (cornus serve beside its containerd): a pull then
// reads a file as distribution's registry does, not containerd's API.
// nil: read it through the API.
func (s registryStore) blobFile(ctx context.Context, d digest.Digest, size int64) *os.File {
	root := s.contentRoot(ctx)
	if root == "" || d.Validate() != nil {
		return nil
	}
	f, err := os.Open(blobPath(root, d))
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Size() != size {
		f.Close()
		return nil
	}
	return f
}

// blobPath is where containerd's local content store keeps blob d.
func blobPath(root string, d digest.Digest) string {
	return filepath.Join(root, "blobs", d.Algorithm().String(), d.Encoded())
}

// contentRoot is containerd's content store directory, where this host
// can read it ("": not here, or not readable).
func (s registryStore) contentRoot(ctx context.Context) string {
	s.b.contentRootOnce.Do(func() {
		// Not the request's cancellation: the answer serves every later pull.
		res, err := s.b.cli.IntrospectionService().Plugins(context.WithoutCancel(ctx), "type==io.containerd.content.v1")
		if err != nil {
			return
		}
		for _, p := range res.Plugins {
			if root := p.Exports["root"]; root != "" {
				if st, err := os.Stat(filepath.Join(root, "blobs")); err == nil && st.IsDir() {
					s.b.contentRoot = root
				}
			}
		}
	})
	return s.b.contentRoot
}

// place commits a verified upload f as blob d by linking it into
// containerd's content store, where cornus serve runs beside containerd
// on one file system: no byte is copied, where an ingest through the API
// wrote the blob once more (1.1 s of a 200 MB push's 1.6 s). Containerd's
// shared content policy (its default) then records the blob in the
// namespace when a writer expecting it is opened: the writer's ingest
// keeps the blob from a collection from then on, and a collection that
// ran before took the link with it, which the check after the open sees.
// false with no error: write it through the API instead.
func (s registryStore) place(ctx context.Context, f *os.File, d digest.Digest, size int64, labels map[string]string) (bool, error) {
	root := s.contentRoot(ctx)
	if root == "" || d.Validate() != nil || !filepath.IsAbs(f.Name()) {
		return false, nil
	}
	dst := blobPath(root, d)
	if err := os.Link(f.Name(), dst); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, nil // another file system: write it
	}
	_ = os.Chmod(dst, 0o444) // as containerd keeps its blobs
	cw, err := content.OpenWriter(ctx, s.cs(), content.WithRef("cornus-registry-"+d.String()), content.WithDescriptor(ocispec.Descriptor{Digest: d, Size: size}))
	if errdefs.IsAlreadyExists(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer cw.Close()
	if st, err := os.Stat(dst); err != nil || st.Size() != size {
		return false, nil
	}
	switch err := cw.Commit(ctx, size, d, content.WithLabels(labels)); {
	case err == nil, errdefs.IsAlreadyExists(err):
		return true, nil
	case errdefs.IsFailedPrecondition(err):
		return false, nil // not shared (an isolated content policy): the writer wants the bytes
	default:
		return false, err
	}
}
