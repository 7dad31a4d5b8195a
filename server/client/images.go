package client

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/server/api"
)

// LoadImage pushes an image archive into the server's backend.
func (c *Client) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	resp, err := c.do(ctx, http.MethodPost, api.Version+"/images/load", nil, tar, http.Header{"Content-Type": {"application/x-tar"}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var refs []string
	err = decode(resp, &refs)
	return refs, err
}

// ListImages lists the images in the server's backend.
func (c *Client) ListImages(ctx context.Context) ([]backends.Image, error) {
	var imgs []backends.Image
	err := c.call(ctx, http.MethodGet, api.Version+"/images", nil, nil, &imgs)
	return imgs, err
}

// InspectImage asks the server for the image ref names, as this tenant
// sees it (errdefs.ErrNotFound: not there, or not for this tenant).
func (c *Client) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	var img backends.Image
	err := c.call(ctx, http.MethodGet, api.Version+"/images/inspect", url.Values{"name": {ref}}, nil, &img)
	return img, err
}
