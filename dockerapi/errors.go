package dockerapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"runtime/debug"

	"github.com/containerd/errdefs"
)

// errorStatus maps an error class to the status dockerd answers with. This
// is the one place classes become HTTP.
func errorStatus(err error) int {
	var tooLarge *bodyTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errdefs.IsNotFound(err):
		return http.StatusNotFound
	case errdefs.IsInvalidArgument(err):
		return http.StatusBadRequest
	case errdefs.IsConflict(err), errdefs.IsAlreadyExists(err):
		return http.StatusConflict
	case errdefs.IsPermissionDenied(err):
		return http.StatusForbidden
	case errdefs.IsUnauthorized(err):
		return http.StatusUnauthorized
	case errdefs.IsNotImplemented(err):
		return http.StatusNotImplemented
	case errdefs.IsUnavailable(err):
		return http.StatusServiceUnavailable
	case errdefs.IsNotModified(err):
		return http.StatusNotModified
	case errdefs.IsFailedPrecondition(err):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// writeError answers with the error's status and dockerd's JSON shape
// {"message": "..."}.
func writeError(w http.ResponseWriter, err error) {
	status := errorStatus(err)
	if status == http.StatusNotModified {
		w.WriteHeader(status)
		return
	}
	writeMessage(w, status, classMessage(err))
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Classed error constructors with dockerd's wording.
func noSuchContainer(id string) error {
	return fmt.Errorf("No such container: %s: %w", id, errdefs.ErrNotFound)
}

func invalidParam(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), errdefs.ErrInvalidArgument)
}

// classMessage drops the class suffix errdefs wrapping adds
// ("...: not found"), so messages read like dockerd's.
func classMessage(err error) string {
	msg := err.Error()
	for _, class := range []error{errdefs.ErrNotFound, errdefs.ErrInvalidArgument, errdefs.ErrConflict, errdefs.ErrNotImplemented, errdefs.ErrPermissionDenied, errdefs.ErrUnavailable} {
		if errors.Is(err, class) {
			suffix := ": " + class.Error()
			if len(msg) > len(suffix) && msg[len(msg)-len(suffix):] == suffix {
				return msg[:len(msg)-len(suffix)]
			}
		}
	}
	return msg
}

// recoverPanics turns a handler panic into a 500 instead of a dropped
// connection, and logs it: one bad request must not take the server down.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Printf("dockerapi: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
				writeMessage(w, http.StatusInternalServerError, fmt.Sprintf("internal error serving %s %s", r.Method, r.URL.Path))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

var errNotFound = errdefs.ErrNotFound
