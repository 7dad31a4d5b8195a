package builder

import (
	"context"
	"fmt"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// imageStore is one image of a backend's content store as a build may
// see it: that image's blobs (its index, manifests, configs, layers), read
// only, whatever the builder on the other end of the session asks.
type imageStore struct {
	content.Store
	blobs map[digest.Digest]bool
}

// scopedStore is target's blobs in s.
func scopedStore(ctx context.Context, s content.Store, target ocispec.Descriptor) (imageStore, error) {
	blobs := map[digest.Digest]bool{}
	err := images.Walk(ctx, images.HandlerFunc(func(ctx context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
		blobs[desc.Digest] = true
		children, err := images.Children(ctx, s, desc)
		if errdefs.IsNotFound(err) {
			return nil, nil // another platform's manifest, not kept here
		}
		return children, err
	}), target)
	if err != nil {
		return imageStore{}, err
	}
	return imageStore{Store: s, blobs: blobs}, nil
}

var errReadOnly = fmt.Errorf("the backend's image store is read-only to builds: %w", errdefs.ErrPermissionDenied)

func (s imageStore) has(d digest.Digest) error {
	if !s.blobs[d] {
		return fmt.Errorf("blob %s: not part of the image handed to the build: %w", d, errdefs.ErrNotFound)
	}
	return nil
}

func (s imageStore) Info(ctx context.Context, d digest.Digest) (content.Info, error) {
	if err := s.has(d); err != nil {
		return content.Info{}, err
	}
	return s.Store.Info(ctx, d)
}

func (s imageStore) ReaderAt(ctx context.Context, desc ocispec.Descriptor) (content.ReaderAt, error) {
	if err := s.has(desc.Digest); err != nil {
		return nil, err
	}
	return s.Store.ReaderAt(ctx, desc)
}

func (s imageStore) Walk(ctx context.Context, fn content.WalkFunc, filters ...string) error {
	return s.Store.Walk(ctx, func(info content.Info) error {
		if !s.blobs[info.Digest] {
			return nil
		}
		return fn(info)
	}, filters...)
}

func (imageStore) Update(context.Context, content.Info, ...string) (content.Info, error) {
	return content.Info{}, errReadOnly
}

func (imageStore) Delete(context.Context, digest.Digest) error { return errReadOnly }

func (imageStore) Writer(context.Context, ...content.WriterOpt) (content.Writer, error) {
	return nil, errReadOnly
}

func (imageStore) Abort(context.Context, string) error { return errReadOnly }
