package dockerhost

import (
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// wrap adds context to an error from the Docker client. The client already
// classes daemon answers with errdefs (404 NotFound, 409 Conflict, 400
// InvalidArgument, 501 NotImplemented, 503 Unavailable, ...); a failed
// connection is unclassed there and becomes Unavailable here.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf(format, args...)
	if client.IsErrConnectionFailed(err) {
		return fmt.Errorf("%s: %w: %w", msg, errdefs.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// invalid returns an InvalidArgument error naming the spec path.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errdefs.ErrInvalidArgument, fmt.Sprintf(format, args...))
}
