package bare

import (
	"context"

	"github.com/cornus-dev/cornus/backends"
)

var _ backends.ImageContenter = (*Backend)(nil)

// ImageContent hands out an image of the store as it is: its blobs stay
// where they are, kept from a removal's collection until Release.
func (b *Backend) ImageContent(ctx context.Context, ref string) (backends.ImageContent, error) {
	unlock, err := b.images.useContent(false)
	if err != nil {
		return backends.ImageContent{}, err
	}
	r, err := b.images.get(ctx, ref)
	if err != nil {
		unlock()
		return backends.ImageContent{}, err
	}
	return backends.ImageContent{Store: b.images.content, Target: r.name.Target, Release: unlock}, nil
}
