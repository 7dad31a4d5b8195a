package devcontainer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// serviceModel renders the devcontainer settings as one Compose service.
func (dc config) serviceModel(path, ws, cws string, composeFlavour bool, local *compose.LocalUser) (map[string]any, []spec.Warning, error) {
	dir := filepath.Dir(path)
	svc := map[string]any{
		"labels": map[string]any{
			"devcontainer.local_folder": ws,
			"devcontainer.config_file":  path,
		},
	}
	var warns []spec.Warning
	if !composeFlavour {
		w, err := dc.imageService(svc, dir, ws)
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
	}
	if len(dc.Mounts) > 0 {
		vols, _ := svc["volumes"].([]any)
		for i, raw := range dc.Mounts {
			m, err := devcontainerMount(raw)
			if err != nil {
				return nil, nil, fmt.Errorf("mounts[%d]: %w", i, err)
			}
			vols = append(vols, m)
		}
		svc["volumes"] = vols
	}
	dc.containerSettings(svc)
	override := !composeFlavour
	if dc.OverrideCommand != nil {
		override = *dc.OverrideCommand
	}
	if override {
		// Keep the container alive for the session and exit promptly on
		// SIGTERM, as the devcontainer CLI does.
		svc["entrypoint"] = []any{"/bin/sh", "-c", "echo Container started\ntrap \"exit 0\" TERM\nwhile sleep 1 & wait $!; do :; done", "-"}
		svc["command"] = []any{}
	}
	if len(dc.RunArgs) > 0 {
		if composeFlavour {
			warns = append(warns, spec.Warning{Service: dc.Service, Field: "devcontainer.json runArgs", Message: "ignored with dockerComposeFile (set the options in the Compose file)"})
		} else {
			w, err := applyRunArgs(svc, dc.RunArgs)
			if err != nil {
				return nil, nil, fmt.Errorf("runArgs: %w", err)
			}
			for i := range w {
				w[i].Service = "devcontainer"
			}
			warns = append(warns, w...)
		}
	}
	stages, err := dc.buildStages(dir, local)
	if err != nil {
		return nil, nil, err
	}
	info, err := dc.info(cws, stages, dir)
	if err != nil {
		return nil, nil, err
	}
	svc[compose.DevcontainerExtension] = info
	return svc, warns, nil
}

// imageService sets what a devcontainer without a Compose file runs: its
// image or build, the workspace mount and appPort.
func (dc config) imageService(svc map[string]any, dir, ws string) ([]spec.Warning, error) {
	var warns []spec.Warning
	if dc.Image != "" {
		svc["image"] = dc.Image
	} else {
		build, w, err := dc.buildSection(dir)
		if err != nil {
			return nil, err
		}
		svc["build"], warns = build, w
	}
	mount := dc.WorkspaceMount
	if mount == "" {
		// The default mount target stays /workspaces/<name> even when
		// workspaceFolder moves the working folder (as in the
		// devcontainer CLI).
		mount = "type=bind,source=" + ws + ",target=/workspaces/" + filepath.Base(ws)
	}
	m, err := parseMountString(mount)
	if err != nil {
		return nil, fmt.Errorf("workspaceMount: %w", err)
	}
	svc["volumes"] = []any{m}
	ports, err := appPorts(dc.AppPort)
	if err != nil {
		return nil, err
	}
	if len(ports) > 0 {
		svc["ports"] = ports
	}
	return warns, nil
}

// buildSection is the Compose build section of build (or the top-level
// dockerFile and context), paths resolved from dir; build.options are
// docker build's flags.
func (dc config) buildSection(dir string) (map[string]any, []spec.Warning, error) {
	b := dc.Build
	if b == nil {
		b = &build{Dockerfile: dc.DockerFile, Context: dc.Context}
	}
	ctxDir := resolveFrom(dir, b.Context)
	build := map[string]any{"context": ctxDir}
	if b.Dockerfile != "" {
		df, err := filepath.Rel(ctxDir, resolveFrom(dir, b.Dockerfile))
		if err != nil {
			return nil, nil, fmt.Errorf("build.dockerfile: %w", err)
		}
		build["dockerfile"] = df
	}
	if len(b.Args) > 0 {
		build["args"] = anyMap(b.Args)
	}
	if b.Target != "" {
		build["target"] = b.Target
	}
	if len(b.CacheFrom) > 0 {
		build["cache_from"] = anyList(b.CacheFrom)
	}
	warns, err := applyFlags(build, b.Options, buildFlags, "devcontainer.json build.options")
	if err != nil {
		return nil, nil, fmt.Errorf("build.options: %w", err)
	}
	return build, warns, nil
}

func anyList(l []string) []any {
	out := make([]any, len(l))
	for i, v := range l {
		out[i] = v
	}
	return out
}

// containerSettings sets the container settings that map one to one.
func (dc config) containerSettings(svc map[string]any) {
	if len(dc.ContainerEnv) > 0 {
		svc["environment"] = anyMap(dc.ContainerEnv)
	}
	if dc.ContainerUser != "" {
		svc["user"] = dc.ContainerUser
	}
	if dc.Privileged {
		svc["privileged"] = true
	}
	if dc.Init {
		svc["init"] = true
	}
	if len(dc.CapAdd) > 0 {
		svc["cap_add"] = anySlice(dc.CapAdd)
	}
	if len(dc.SecurityOpt) > 0 {
		svc["security_opt"] = anySlice(dc.SecurityOpt)
	}
}

// info gathers the session settings and lifecycle commands as a generic
// value for the x-cornus-devcontainer extension.
func (dc config) info(cws string, stages []spec.BuildStage, dir string) (map[string]any, error) {
	d := compose.DevcontainerInfo{Devcontainer: spec.Devcontainer{WorkspaceFolder: cws, RemoteUser: dc.RemoteUser}}
	if len(stages) > 0 {
		d.BuildStages, d.BuildDir = stages, dir
	}
	for k, v := range dc.RemoteEnv {
		if v == nil {
			continue // null unsets a variable
		}
		if d.RemoteEnv == nil {
			d.RemoteEnv = map[string]string{}
		}
		d.RemoteEnv[k] = *v
	}
	for _, fp := range dc.ForwardPorts {
		var n int
		var s string
		switch {
		case json.Unmarshal(fp, &n) == nil:
			s = fmt.Sprint(n)
		case json.Unmarshal(fp, &s) == nil:
		default:
			return nil, fmt.Errorf("forwardPorts: %s is neither a port number nor \"host:port\"", fp)
		}
		d.ForwardPorts = append(d.ForwardPorts, s)
	}
	// The engine runs postCreate (onCreate, updateContent, postCreate, in
	// this order) once after a new container first starts, postStart on
	// every start, postAttach on every up (engine/doc.go).
	hooks := spec.Hooks{}
	for _, c := range []struct {
		field string
		raw   json.RawMessage
		into  *[]spec.Hook
	}{
		{"onCreateCommand", dc.OnCreateCommand, &hooks.PostCreate},
		{"updateContentCommand", dc.UpdateContentCommand, &hooks.PostCreate},
		{"postCreateCommand", dc.PostCreateCommand, &hooks.PostCreate},
		{"postStartCommand", dc.PostStartCommand, &hooks.PostStart},
		{"postAttachCommand", dc.PostAttachCommand, &hooks.PostAttach},
	} {
		hs, err := lifecycleHooks(c.field, c.raw, dc.RemoteUser, cws)
		if err != nil {
			return nil, err
		}
		*c.into = append(*c.into, hs...)
	}
	if len(hooks.PostCreate)+len(hooks.PostStart)+len(hooks.PostAttach) > 0 {
		d.Hooks = &hooks
	}
	return toGeneric(d)
}

// lifecycleHooks converts a devcontainer command (a shell string, an argv
// array, or an object of named commands run in parallel) into hooks.
func lifecycleHooks(field string, raw json.RawMessage, user, dir string) ([]spec.Hook, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	one := func(name string, v any) (spec.Hook, error) {
		h := spec.Hook{Name: name, User: user, WorkingDir: dir}
		switch c := v.(type) {
		case string:
			h.Command = []string{"/bin/sh", "-c", c}
		case []any:
			for _, a := range c {
				s, ok := a.(string)
				if !ok {
					return h, fmt.Errorf("%s: array elements must be strings", field)
				}
				h.Command = append(h.Command, s)
			}
		default:
			return h, fmt.Errorf("%s: expected a string, an array or an object of commands", field)
		}
		if len(h.Command) == 0 {
			return h, fmt.Errorf("%s: empty command", field)
		}
		return h, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		h, err := one(field, v)
		return []spec.Hook{h}, err
	}
	var out []spec.Hook
	for _, k := range sortedMapKeys(obj) {
		h, err := one(field+"."+k, obj[k])
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// appPorts turns appPort (a number, a "host:container" string, or an array
// of those) into Compose short-syntax ports.
func appPorts(raw json.RawMessage) ([]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("appPort: %w", err)
	}
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	var out []any
	for _, it := range items {
		switch p := it.(type) {
		case float64:
			// A bare port is published on loopback only, as the
			// devcontainer CLI does.
			out = append(out, fmt.Sprintf("127.0.0.1:%d:%d", int(p), int(p)))
		case string:
			if !strings.Contains(p, ":") {
				p = p + ":" + p
			}
			out = append(out, p)
		default:
			return nil, fmt.Errorf("appPort: %v is neither a port number nor a \"host:container\" string", it)
		}
	}
	return out, nil
}

// devcontainerMount converts a mounts entry, "type=bind,source=…,target=…"
// or {"type","source","target"}, into a Compose long-syntax volume.
func devcontainerMount(raw json.RawMessage) (map[string]any, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parseMountString(s)
	}
	var o struct {
		Type, Source, Target string
		ReadOnly             bool `json:"readonly"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("expected a string or {type, source, target}")
	}
	return composeMount(o.Type, o.Source, o.Target, o.ReadOnly)
}

// parseMountString parses docker's --mount syntax.
func parseMountString(s string) (map[string]any, error) {
	var typ, src, dst string
	ro := false
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch strings.ToLower(k) {
		case "type":
			typ = v
		case "source", "src":
			src = v
		case "target", "dst", "destination":
			dst = v
		case "readonly", "ro":
			ro = v == "" || v == "true" || v == "1"
		case "consistency", "bind-propagation", "volume-nocopy", "":
			// consistency is a macOS hint; the rest carry no information here
		default:
			return nil, fmt.Errorf("mount %q: unknown option %q", s, k)
		}
	}
	return composeMount(typ, src, dst, ro)
}

func composeMount(typ, src, dst string, ro bool) (map[string]any, error) {
	if typ == "" {
		typ = "volume"
	}
	switch typ {
	case "bind", "volume", "tmpfs":
	default:
		return nil, fmt.Errorf("mount type %q is not bind, volume or tmpfs", typ)
	}
	if dst == "" {
		return nil, fmt.Errorf("mount of %q needs a target", src)
	}
	m := map[string]any{"type": typ, "target": dst}
	if src != "" {
		m["source"] = src
	}
	if ro {
		m["read_only"] = true
	}
	return m, nil
}

// namedVolumes declares the named volumes the service mounts. A devcontainer
// names volumes literally (as `docker run -v NAME:...` would), so the
// declaration pins the runtime name instead of prefixing the project's.
func namedVolumes(svc map[string]any) map[string]any {
	out := map[string]any{}
	vols, _ := svc["volumes"].([]any)
	for _, v := range vols {
		m, ok := v.(map[string]any)
		if !ok || m["type"] != "volume" {
			continue
		}
		if src, _ := m["source"].(string); src != "" {
			out[src] = map[string]any{"name": src}
		}
	}
	return out
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// toGeneric converts a typed value into plain maps and slices via YAML, the
// shape compose-go expects in an in-memory config file.
func toGeneric(v any) (map[string]any, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}
