package client

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/caretaker/mount/export"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// LocalMount is a directory or file of this machine bound, live, into an
// app the server runs.
type LocalMount struct {
	// Service is the app it goes into; "" means every app of the project.
	Service string
	// Source is the path on this machine (absolute).
	Source   string
	Target   string
	ReadOnly bool
}

// ParseLocalMount parses --local-mount's [SERVICE=]SRC:DST[:ro|:rw]; a
// relative SRC is taken from dir.
func ParseLocalMount(v, dir string) (LocalMount, error) {
	var m LocalMount
	rest := v
	if svc, after, ok := strings.Cut(v, "="); ok && !strings.ContainsAny(svc, "/:") {
		m.Service, rest = svc, after
	}
	parts := strings.Split(rest, ":")
	switch {
	case len(parts) == 3 && parts[2] == "ro":
		m.ReadOnly = true
	case len(parts) == 3 && parts[2] == "rw":
	case len(parts) == 2:
	default:
		return m, fmt.Errorf("%w: --local-mount %q: want [SERVICE=]SRC:DST[:ro]", errdefs.ErrInvalidArgument, v)
	}
	m.Source, m.Target = parts[0], parts[1]
	if m.Source == "" || !strings.HasPrefix(m.Target, "/") {
		return m, fmt.Errorf("%w: --local-mount %q: SRC must be set and DST absolute", errdefs.ErrInvalidArgument, v)
	}
	if !filepath.IsAbs(m.Source) {
		m.Source = filepath.Join(dir, m.Source)
	}
	m.Source = filepath.Clean(m.Source)
	return m, nil
}

// ExportSpec is one directory this client serves (a file's parent with
// only File visible when File is set).
type ExportSpec struct {
	Root     string `json:"root"`
	File     string `json:"file,omitempty"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Exports are the client-local mounts of one deployment: what the server
// is told (Wire) and what this client serves (by index).
type Exports struct {
	Specs []ExportSpec
	Wire  []api.LocalMount
}

// NewExports resolves mounts for project p: each source must exist as a
// directory or a regular file (the name the developer gave is followed if
// it is a link; below it nothing is). The same source with the same mode
// is exported once, whatever the number of apps it goes into.
func NewExports(p spec.Project, mounts []LocalMount) (*Exports, error) {
	e := &Exports{}
	index := map[ExportSpec]int{}
	for _, m := range mounts {
		services := []string{m.Service}
		if m.Service == "" {
			services = p.ServiceNames()
		} else if _, ok := p.Services[m.Service]; !ok {
			return nil, fmt.Errorf("%w: local mount %s: no service %q in project %s", errdefs.ErrInvalidArgument, m.Source, m.Service, p.Name)
		}
		real, err := filepath.EvalSymlinks(m.Source)
		if err != nil {
			return nil, fmt.Errorf("local mount %s: %w", m.Source, err)
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("local mount %s: %w", m.Source, err)
		}
		es := ExportSpec{Root: real, ReadOnly: m.ReadOnly}
		switch {
		case st.IsDir():
		case st.Mode().IsRegular():
			es.Root, es.File = filepath.Dir(real), filepath.Base(real)
		default:
			return nil, fmt.Errorf("%w: local mount %s: only directories and regular files can be served (this is %s)", errdefs.ErrInvalidArgument, m.Source, st.Mode().Type())
		}
		i, ok := index[es]
		if !ok {
			i = len(e.Specs)
			index[es] = i
			e.Specs = append(e.Specs, es)
		}
		for _, svc := range services {
			e.Wire = append(e.Wire, api.LocalMount{Index: i, Service: svc, Target: m.Target, ReadOnly: m.ReadOnly, File: es.File, Source: m.Source})
		}
	}
	if len(e.Wire) > api.MaxLocalMounts {
		return nil, fmt.Errorf("%w: %d client-local mounts: at most %d", errdefs.ErrInvalidArgument, len(e.Wire), api.MaxLocalMounts)
	}
	return e, nil
}

// Handler serves the server's OpMount streams: the 9P export of mount
// Index, confined to its directory (read-only ones refuse every write
// here, whatever the server asks), until the stream or ctx ends.
func (e *Exports) Handler(ctx context.Context) Handler {
	specs := slices.Clone(e.Specs)
	return func(h api.StreamHeader, st net.Conn) {
		if h.Mount == nil || h.Mount.Index < 0 || h.Mount.Index >= len(specs) {
			Reply(st, fmt.Errorf("%w: no client-local mount %v here", errdefs.ErrNotFound, h.Mount))
			st.Close()
			return
		}
		es := specs[h.Mount.Index]
		Reply(st, nil)
		o := export.Options{ReadOnly: es.ReadOnly}
		// The serve functions close st.
		if es.File != "" {
			_ = export.ServeFile(ctx, st, filepath.Join(es.Root, es.File), o)
			return
		}
		_ = export.Serve(ctx, st, es.Root, o)
	}
}

// BindsToLocal turns p's bind mounts whose source exists on this machine
// as a directory or regular file (or is missing and would be created, as
// Compose creates a missing bind source) into client-local mounts, as a
// Compose user expects of a remote deploy: the files on their machine,
// live. It returns a copy of p without those binds, the mounts, and one
// note per converted bind. Other binds (sockets, devices) stay binds of
// the server's host, and say so.
func BindsToLocal(p spec.Project) (spec.Project, []LocalMount, []string, error) {
	out := p
	out.Services = make(map[string]spec.App, len(p.Services))
	var mounts []LocalMount
	var notes []string
	for _, name := range p.ServiceNames() {
		a := p.Services[name]
		var kept []spec.Mount
		for i, m := range a.Mounts {
			at := fmt.Sprintf("services.%s.volumes[bind %d]", name, i)
			st, err := os.Stat(m.Source)
			if os.IsNotExist(err) && m.CreateHostPath {
				if err = os.MkdirAll(m.Source, 0o755); err == nil {
					st, err = os.Stat(m.Source)
				}
			}
			if err != nil {
				return p, nil, nil, fmt.Errorf("%s: bind source %s: %w", at, m.Source, err)
			}
			if !st.IsDir() && !st.Mode().IsRegular() {
				kept = append(kept, m)
				notes = append(notes, fmt.Sprintf("service %s: %s → %s stays a bind of the server's host path (a %s cannot be served from this machine)", name, m.Source, m.Target, st.Mode().Type()))
				continue
			}
			mounts = append(mounts, LocalMount{Service: name, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
			mode := "read-write"
			if m.ReadOnly {
				mode = "read-only"
			}
			notes = append(notes, fmt.Sprintf("service %s: %s → %s is a client-local mount (%s, served live from this machine over the session)", name, m.Source, m.Target, mode))
		}
		a.Mounts = kept
		out.Services[name] = a
	}
	return out, mounts, notes, nil
}
