package api

import (
	"errors"
	"net/http"

	"github.com/containerd/errdefs"
)

// kinds pairs each error class the API carries with its HTTP status.
var kinds = []struct {
	kind   string
	class  error
	status int
	is     func(error) bool
}{
	{"notfound", errdefs.ErrNotFound, http.StatusNotFound, errdefs.IsNotFound},
	{"conflict", errdefs.ErrConflict, http.StatusConflict, errdefs.IsConflict},
	{"invalid", errdefs.ErrInvalidArgument, http.StatusBadRequest, errdefs.IsInvalidArgument},
	{"denied", errdefs.ErrPermissionDenied, http.StatusForbidden, errdefs.IsPermissionDenied},
	{"unauthenticated", errdefs.ErrUnauthenticated, http.StatusUnauthorized, errdefs.IsUnauthorized},
	{"unavailable", errdefs.ErrUnavailable, http.StatusServiceUnavailable, errdefs.IsUnavailable},
	{"notimplemented", errdefs.ErrNotImplemented, http.StatusNotImplemented, errdefs.IsNotImplemented},
	{"precondition", errdefs.ErrFailedPrecondition, http.StatusPreconditionFailed, errdefs.IsFailedPrecondition},
	{"toolarge", errdefs.ErrOutOfRange, http.StatusRequestEntityTooLarge, errdefs.IsOutOfRange},
}

// ErrorOf is err as the API sends it, with its class and HTTP status.
func ErrorOf(err error) (Error, int) {
	for _, k := range kinds {
		if k.is(err) {
			return Error{Message: err.Error(), Kind: k.kind}, k.status
		}
	}
	return Error{Message: err.Error()}, http.StatusInternalServerError
}

// Err turns a received Error back into an error of its class.
func (e Error) Err() error {
	for _, k := range kinds {
		if k.kind == e.Kind {
			return &remoteError{msg: e.Message, class: k.class}
		}
	}
	return errors.New(e.Message)
}

type remoteError struct {
	msg   string
	class error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.class }
