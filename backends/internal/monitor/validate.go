package monitor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// Validate checks what the backend sets in a record (identity and
// supervision) and reports every problem with its field path, as an
// errdefs InvalidArgument.
func (r Record) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{field}, args...)...))
	}
	if err := validID(r.ID); err != nil {
		errs = append(errs, err)
	}
	s := r.Supervision
	switch s.Restart.Name {
	case "", spec.RestartNo, spec.RestartAlways, spec.RestartUnlessStopped:
		if s.Restart.MaxRetries != 0 {
			bad("supervision.restart.maxRetries", "only on-failure takes a retry count")
		}
	case spec.RestartOnFailure:
		if s.Restart.MaxRetries < 0 {
			bad("supervision.restart.maxRetries", "%d is negative", s.Restart.MaxRetries)
		}
	default:
		bad("supervision.restart.name", "%q is not one of no, always, on-failure, unless-stopped", s.Restart.Name)
	}
	if s.StopSignal < 0 || s.StopSignal > 64 {
		bad("supervision.stopSignal", "%d is not a Linux signal", int(s.StopSignal))
	}
	if s.StopGrace != nil && *s.StopGrace < 0 {
		bad("supervision.stopGrace", "%v is negative", *s.StopGrace)
	}
	if s.LogMaxBytes < 0 {
		bad("supervision.logMaxBytes", "%d is negative", s.LogMaxBytes)
	}
	if h := s.Healthcheck; h != nil {
		if _, _, err := h.command(); err != nil {
			bad("supervision.healthcheck.test", "%v", err)
		}
		for _, f := range []struct {
			name string
			v    int64
		}{
			{"interval", int64(h.Interval)}, {"timeout", int64(h.Timeout)},
			{"startPeriod", int64(h.StartPeriod)}, {"startInterval", int64(h.StartInterval)},
			{"retries", int64(h.Retries)},
		} {
			if f.v < 0 {
				bad("supervision.healthcheck."+f.name, "must not be negative")
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: container record %q: %w", errdefs.ErrInvalidArgument, r.ID, err)
	}
	return nil
}

// validID keeps an ID one plain path element: it names a directory.
func validID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") || len(id) > 255 {
		return fmt.Errorf("%w: container id %q must be one path element of at most 255 bytes", errdefs.ErrInvalidArgument, id)
	}
	return nil
}

// command turns the test into the argv to exec; enabled is false for
// ["NONE"] or no test at all.
func (h Healthcheck) command() (cmd []string, enabled bool, err error) {
	if len(h.Test) == 0 {
		return nil, false, nil
	}
	switch h.Test[0] {
	case "NONE":
		return nil, false, nil
	case "CMD":
		if len(h.Test) < 2 {
			return nil, false, errors.New(`["CMD"] needs a command`)
		}
		return h.Test[1:], true, nil
	case "CMD-SHELL":
		if len(h.Test) != 2 {
			return nil, false, errors.New(`["CMD-SHELL", script] takes exactly one script`)
		}
		return []string{"/bin/sh", "-c", h.Test[1]}, true, nil
	}
	return nil, false, fmt.Errorf("%q: a test starts with CMD, CMD-SHELL or NONE", h.Test[0])
}
