package devcontainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// Load maps a devcontainer.json (o.Devcontainer; either flavour) onto a
// Compose model and loads it with compose-go through compose.LoadOverlay,
// so that devcontainers and Compose projects become the same project type.
func Load(ctx context.Context, o compose.Options) (compose.LoadResult, error) {
	path := o.Devcontainer
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.WorkingDir, path)
	}
	data, err := boundedfile.Read(path, boundedfile.DevcontainerFile)
	if err != nil {
		return compose.LoadResult{}, fmt.Errorf("read devcontainer: %w", err)
	}
	var raw map[string]any
	if err := compose.UnmarshalJSONC(data, &raw); err != nil {
		return compose.LoadResult{}, fmt.Errorf("%s:%w", path, err)
	}
	// Decode once before variable expansion, which never changes types, so
	// type errors point at line:column in the file.
	if err := compose.UnmarshalJSONC(data, new(config)); err != nil {
		return compose.LoadResult{}, fmt.Errorf("%s:%w", path, err)
	}
	ws := workspaceOf(path)
	vars := newVariables(path, ws, envMap(o.Environ))
	// The container workspace may itself use local variables.
	cwf, _ := raw["workspaceFolder"].(string)
	vars.setContainerWorkspace(vars.expand(cwf), namesComposeFile(raw["dockerComposeFile"]))
	std, err := json.Marshal(vars.expandAll(raw))
	if err != nil {
		return compose.LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}
	var dc config
	if err := json.Unmarshal(std, &dc); err != nil {
		return compose.LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}
	warns := keyWarnings(raw)
	warns = append(warns, dc.behaviourWarnings()...)
	composeFlavour := len(dc.DockerComposeFile) > 0
	svcName := "devcontainer"
	if composeFlavour {
		if dc.Service == "" {
			return compose.LoadResult{}, fmt.Errorf("%s: service: required with dockerComposeFile: name the service to develop in", path)
		}
		svcName = dc.Service
	} else if dc.Image == "" && dc.Build == nil && dc.DockerFile == "" {
		return compose.LoadResult{}, fmt.Errorf("%s: set image, build.dockerfile or dockerComposeFile", path)
	}
	svc, runWarns, err := dc.serviceModel(path, ws, vars.containerWorkspace, composeFlavour, o.LocalUser)
	if err != nil {
		return compose.LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}
	warns = append(warns, runWarns...)
	ov, err := overlay(path, svcName, svc)
	if err != nil {
		return compose.LoadResult{}, err
	}
	ov.WorkingDir = ws
	ov.DefaultName = loader.NormalizeProjectName(filepath.Base(ws) + "_devcontainer")
	for _, f := range dc.DockerComposeFile {
		ov.Files = append(ov.Files, resolveFrom(filepath.Dir(path), f))
	}
	p, err := loadService(ctx, o, ov, svcName, fmt.Sprintf("%s: service: %q is not defined in %s: name one of its services", path, svcName, strings.Join(dc.DockerComposeFile, ", ")))
	if err != nil {
		return compose.LoadResult{}, err
	}
	if composeFlavour && len(dc.RunServices) > 0 {
		if p, err = p.WithSelectedServices(append([]string{svcName}, dc.RunServices...)); err != nil {
			return compose.LoadResult{}, fmt.Errorf("%s: runServices: %w", path, err)
		}
	}
	p, err = compose.TypedExtensions(p)
	if err != nil {
		return compose.LoadResult{}, err
	}
	return compose.LoadResult{Project: p, Warnings: warns}, nil
}

// overlay is the Compose file holding svc (and its named volumes), named
// after the devcontainer.json it came from.
func overlay(path, svcName string, svc map[string]any) (compose.Overlay, error) {
	model := map[string]any{"services": map[string]any{svcName: svc}}
	if vols := namedVolumes(svc); len(vols) > 0 {
		model["volumes"] = vols
	}
	escaped := escapeDollars(model).(map[string]any)
	// Content must be set too: compose-go reads a file's Content (or the
	// file itself) to find a top-level name, and devcontainer.json's display
	// "name" is not a project name.
	content, err := yaml.Marshal(escaped)
	if err != nil {
		return compose.Overlay{}, fmt.Errorf("%s: %w", path, err)
	}
	return compose.Overlay{File: types.ConfigFile{Filename: path, Config: escaped, Content: content}}, nil
}

// loadService loads ov and checks it holds svcName, else fails with
// undefined.
func loadService(ctx context.Context, o compose.Options, ov compose.Overlay, svcName, undefined string) (*types.Project, error) {
	p, err := compose.LoadOverlay(ctx, o, ov)
	if err != nil {
		if len(ov.Files) > 0 {
			// The overlay may be what fails ("no image") when the service
			// does not exist: check without it to say so.
			base := ov
			base.File = types.ConfigFile{}
			if bp, berr := compose.LoadOverlay(ctx, o, base); berr == nil {
				if _, ok := bp.Services[svcName]; !ok {
					return nil, errors.New(undefined)
				}
			}
		}
		return nil, err
	}
	if _, ok := p.Services[svcName]; !ok {
		return nil, errors.New(undefined)
	}
	return p, nil
}

// workspaceOf returns the local workspace folder of a devcontainer.json:
// the parent of a .devcontainer directory, else the file's own directory.
func workspaceOf(path string) string {
	dir := filepath.Dir(path)
	for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if filepath.Base(d) == ".devcontainer" {
			return filepath.Dir(d)
		}
	}
	return dir
}

// namesComposeFile reports whether a raw dockerComposeFile value names a
// file: a string, or a list holding one.
func namesComposeFile(v any) bool {
	switch t := v.(type) {
	case string:
		return true
	case []any:
		return slices.ContainsFunc(t, func(e any) bool { _, ok := e.(string); return ok })
	}
	return false
}

func resolveFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// envMap turns KEY=VALUE pairs into a map, the later pair winning.
func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
