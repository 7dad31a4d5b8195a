package registry

import (
	"context"
	"errors"
	"io"

	"github.com/opencontainers/go-digest"
)

// Store is where a registry's content lives. Blobs are content-addressed
// and linked to the repositories that may read them; manifests are kept
// per repository, with tags naming them.
//
// Errors: ErrNotFound for what is missing, ErrUnsupported for what the
// store cannot keep; anything else is a failure of the store.
type Store interface {
	// Blob returns the size of blob d as repo may read it.
	Blob(ctx context.Context, repo string, d digest.Digest) (int64, error)
	// OpenBlob opens blob d for reading (seekable, for ranges).
	OpenBlob(ctx context.Context, repo string, d digest.Digest) (io.ReadSeekCloser, error)
	// PutBlob stores a verified blob (r holds exactly size bytes of d)
	// and links it to repo.
	PutBlob(ctx context.Context, repo string, d digest.Digest, size int64, r io.Reader) error
	// LinkBlob links blob d, stored for another repository, to repo (a
	// cross-repository mount); ErrNotFound when the store has no d.
	LinkBlob(ctx context.Context, repo string, d digest.Digest) error
	// DeleteBlob unlinks blob d from repo.
	DeleteBlob(ctx context.Context, repo string, d digest.Digest) error

	// Manifest returns the manifest ref (a tag or a digest) names in repo.
	Manifest(ctx context.Context, repo, ref string) (Manifest, error)
	// PutManifest stores m in repo and points tags (none, one or
	// several) at it.
	PutManifest(ctx context.Context, repo string, m Manifest, tags ...string) error
	// DeleteManifest removes manifest d from repo, and every tag naming it.
	DeleteManifest(ctx context.Context, repo string, d digest.Digest) error
	// DeleteTag removes a tag from repo (not the manifest it names).
	DeleteTag(ctx context.Context, repo, tag string) error
	// Manifests lists the digests of repo's manifests.
	Manifests(ctx context.Context, repo string) ([]digest.Digest, error)
	// Tags lists repo's tags; ErrNotFound when repo has none and no
	// manifest.
	Tags(ctx context.Context, repo string) ([]string, error)
	// Repositories lists the repositories that hold a manifest or a blob.
	Repositories(ctx context.Context) ([]string, error)
}

// Manifest is a manifest as pushed: its bytes, media type and digest.
type Manifest struct {
	MediaType string
	Digest    digest.Digest
	Data      []byte
}

// ErrNotFound is what a Store returns for missing content.
var ErrNotFound = errors.New("not found")

// ErrUnsupported is what a Store returns for content it cannot keep (a
// digest algorithm it does not verify); the client gets 400 UNSUPPORTED.
var ErrUnsupported = errors.New("unsupported")
