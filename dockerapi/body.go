package dockerapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/containerd/errdefs"
)

// Request body limits. A JSON body is decoded whole into memory, so each
// endpoint reads at most what a real client can need; archive uploads
// (PUT /containers/{id}/archive) and image loads (POST /images/load) are
// streamed to the backend instead and take no limit.
const (
	// maxCreateBody bounds container and exec create: their bulk is a
	// command and an environment, which Linux's exec caps at 2 MiB
	// (ARG_MAX); JSON escaping and the rest of the config fit in twice that.
	maxCreateBody = 4 << 20
	// maxSmallBody bounds the other JSON bodies (network and volume
	// create, connect, disconnect, exec start): names, labels and options,
	// kilobytes in practice.
	maxSmallBody = 1 << 20
)

// decodeJSON decodes r's JSON body into v, reading at most limit bytes:
// a larger body is refused without being read whole (413). Other decode
// errors are invalid arguments that still match io.EOF for an empty body.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	tooLarge := &bodyTooLargeError{endpoint: r.Method + " " + r.URL.Path, limit: limit}
	if r.ContentLength > limit {
		return tooLarge
	}
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(v)
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mbe):
		return tooLarge
	}
	return fmt.Errorf("invalid JSON: %w: %w", err, errdefs.ErrInvalidArgument)
}

// bodyTooLargeError is a request body over its endpoint's limit.
type bodyTooLargeError struct {
	endpoint string
	limit    int64
}

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("request body too large: cornus reads at most %d MiB for %s", e.limit>>20, e.endpoint)
}
