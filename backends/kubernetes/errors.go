package kubernetes

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/containerd/errdefs"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// translate maps an API error onto its errdefs class (the message is
// kept): NotFound, AlreadyExists and Conflict → Conflict (for
// AlreadyExists) or FailedPrecondition (a stale update), Forbidden →
// PermissionDenied, Invalid → InvalidArgument, timeouts and unavailable
// servers → Unavailable.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var class error
	switch {
	case apierrors.IsNotFound(err):
		class = errdefs.ErrNotFound
	case apierrors.IsAlreadyExists(err):
		class = errdefs.ErrConflict
	case apierrors.IsConflict(err):
		class = errdefs.ErrFailedPrecondition
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		class = errdefs.ErrPermissionDenied
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		class = errdefs.ErrInvalidArgument
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err),
		unreachable(err):
		class = errdefs.ErrUnavailable
	default:
		return err
	}
	if errors.Is(err, class) {
		return err
	}
	return fmt.Errorf("%w: %w", err, class)
}

// unreachable reports an API server that did not answer at all (down,
// restarting, its address not routed yet).
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// wrap names what failed: "create pod x: <api error>: <class>".
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, translate(err))...)
}
