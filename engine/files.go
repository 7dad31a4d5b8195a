package engine

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// FileContent is a secret's or config's content: its file (bounded), its
// environment variable (the value captured at load time, else lookup's),
// or its inline content.
func FileContent(fm spec.FileMount, lookup func(string) (string, bool)) ([]byte, error) {
	switch {
	case fm.File != "":
		return boundedfile.Read(fm.File, boundedfile.SecretFile)
	case fm.Environment != "":
		if fm.Value != nil {
			return []byte(*fm.Value), nil
		}
		if v, ok := lookup(fm.Environment); ok {
			return []byte(v), nil
		}
		return nil, fmt.Errorf("environment variable %s is not set: set it before deploying", fm.Environment)
	}
	return []byte(fm.Content), nil
}

// InlineFiles returns a copy of p whose secrets and configs carry their
// content inline, read here (a client, on its own machine), so whoever
// applies p reads none of its own files or environment.
func InlineFiles(p spec.Project, lookup func(string) (string, bool)) (spec.Project, error) {
	out := p
	out.Services = maps.Clone(p.Services)
	for _, name := range p.ServiceNames() {
		a := out.Services[name]
		for _, set := range []struct {
			kind string
			fms  *[]spec.FileMount
		}{{"secrets", &a.Secrets}, {"configs", &a.Configs}} {
			fms := append([]spec.FileMount(nil), *set.fms...)
			for i, fm := range fms {
				if fm.File == "" && fm.Environment == "" {
					continue
				}
				b, err := FileContent(fm, lookup)
				if err != nil {
					return p, fmt.Errorf("services.%s.%s[%d] (%s): %w", name, set.kind, i, fm.Name, err)
				}
				fm.Content, fm.File, fm.Environment, fm.Value = string(b), "", "", nil
				fms[i] = fm
			}
			*set.fms = fms
		}
		out.Services[name] = a
	}
	return out, nil
}

// files resolves an app's secrets and configs into contents to place in
// its containers (read-only, mode 0444 unless set).
func (e *Engine) files(a spec.App) ([]backends.File, error) {
	return appFiles(a, e.environ, e.noHostFiles)
}

// appFiles reads a's secrets and configs, from environ for those that
// name a variable; with noHostFiles only content the spec carries.
func appFiles(a spec.App, environ map[string]string, noHostFiles bool) ([]backends.File, error) {
	var out []backends.File
	lookup := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
	for _, set := range []struct {
		kind string
		fms  []spec.FileMount
	}{{"secrets", a.Secrets}, {"configs", a.Configs}} {
		for i, fm := range set.fms {
			at := fmt.Sprintf("services.%s.%s[%d]", a.Name, set.kind, i)
			if noHostFiles && (fm.File != "" || (fm.Environment != "" && fm.Value == nil)) {
				return nil, fmt.Errorf("%s (%s): the content must come with the spec: this engine reads no file or environment of its host for it", at, fm.Name)
			}
			content, err := FileContent(fm, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", at, fm.Name, err)
			}
			f := backends.File{Target: fm.Target, Content: content, Mode: 0o444}
			if fm.Mode != nil {
				f.Mode = uint32(*fm.Mode)
			}
			if fm.UID != "" {
				f.UID, _ = strconv.Atoi(fm.UID) // validated numeric
			}
			if fm.GID != "" {
				f.GID, _ = strconv.Atoi(fm.GID)
			}
			out = append(out, f)
		}
	}
	return out, nil
}
