package compose

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// devcontainerConfig is the part of devcontainer.json cornus reads
// (https://containers.dev/implementors/json_reference/).
type devcontainerConfig struct {
	Name              string             `json:"name"`
	Image             string             `json:"image"`
	Build             *devcontainerBuild `json:"build"`
	DockerFile        string             `json:"dockerFile"` // legacy spelling of build.dockerfile
	Context           string             `json:"context"`    // legacy spelling of build.context
	DockerComposeFile stringList         `json:"dockerComposeFile"`
	Service           string             `json:"service"`
	RunServices       []string           `json:"runServices"`
	WorkspaceFolder   string             `json:"workspaceFolder"`
	WorkspaceMount    string             `json:"workspaceMount"`
	Mounts            []json.RawMessage  `json:"mounts"`
	ContainerEnv      map[string]string  `json:"containerEnv"`
	RemoteEnv         map[string]*string `json:"remoteEnv"`
	ContainerUser     string             `json:"containerUser"`
	RemoteUser        string             `json:"remoteUser"`
	ForwardPorts      []json.RawMessage  `json:"forwardPorts"`
	AppPort           json.RawMessage    `json:"appPort"`
	OverrideCommand   *bool              `json:"overrideCommand"`
	RunArgs           []string           `json:"runArgs"`
	Privileged        bool               `json:"privileged"`
	CapAdd            []string           `json:"capAdd"`
	SecurityOpt       []string           `json:"securityOpt"`
	Init              bool               `json:"init"`

	// Keys that change how the devcontainer CLI runs the container.
	UpdateRemoteUserUID *bool  `json:"updateRemoteUserUID"`
	ShutdownAction      string `json:"shutdownAction"`
	UserEnvProbe        string `json:"userEnvProbe"`

	InitializeCommand    json.RawMessage `json:"initializeCommand"`
	OnCreateCommand      json.RawMessage `json:"onCreateCommand"`
	UpdateContentCommand json.RawMessage `json:"updateContentCommand"`
	PostCreateCommand    json.RawMessage `json:"postCreateCommand"`
	PostStartCommand     json.RawMessage `json:"postStartCommand"`
	PostAttachCommand    json.RawMessage `json:"postAttachCommand"`
}

type devcontainerBuild struct {
	Dockerfile string            `json:"dockerfile"`
	Context    string            `json:"context"`
	Args       map[string]string `json:"args"`
	Target     string            `json:"target"`
}

// devcontainerToolKeys are editor settings with no effect on the container
// (so no warning: docs/cli.md lists them) and keys warned about in
// unsupportedDevcontainerKeys. Keys that change behaviour are read into
// devcontainerConfig and either honored or warned about by name.
var devcontainerToolKeys = map[string]bool{
	"$schema": true, "customizations": true, "portsAttributes": true, "otherPortsAttributes": true,
	"waitFor": true, "hostRequirements": true, "features": true, "overrideFeatureInstallOrder": true,
}

var unsupportedDevcontainerKeys = map[string]string{
	"features":                    "dev container features need an image build, which cornus does not do yet; bake them into the image",
	"overrideFeatureInstallOrder": "dev container features are not supported yet",
	"hostRequirements":            "host requirements are not checked",
	"initializeCommand":           "commands on the host are not run by cornus; run it before deploying",
}

// loadDevcontainer maps devcontainer.json (either flavour) onto a Compose
// model and loads it with compose-go, so that devcontainers and Compose
// projects become the same project type.
func loadDevcontainer(ctx context.Context, o Options) (LoadResult, error) {
	path := o.Devcontainer
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.WorkingDir, path)
	}
	data, err := boundedfile.Read(path, boundedfile.DevcontainerFile)
	if err != nil {
		return LoadResult{}, fmt.Errorf("read devcontainer: %w", err)
	}
	var raw map[string]any
	if err := UnmarshalJSONC(data, &raw); err != nil {
		return LoadResult{}, fmt.Errorf("%s:%w", path, err)
	}
	// Decode once before variable expansion, which never changes types, so
	// type errors point at line:column in the file.
	if err := UnmarshalJSONC(data, new(devcontainerConfig)); err != nil {
		return LoadResult{}, fmt.Errorf("%s:%w", path, err)
	}
	ws := workspaceOf(path)
	vars := newDevcontainerVars(path, ws, envMap(o.Environ))
	// The container workspace may itself use local variables.
	cwf, _ := raw["workspaceFolder"].(string)
	vars.setContainerWorkspace(vars.expand(cwf), len(stringsOf(raw["dockerComposeFile"])) > 0)
	std, err := json.Marshal(vars.expandAll(raw))
	if err != nil {
		return LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}
	var dc devcontainerConfig
	if err := json.Unmarshal(std, &dc); err != nil {
		return LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}

	var warns []spec.Warning
	for _, k := range sortedMapKeys(raw) {
		if msg, ok := unsupportedDevcontainerKeys[k]; ok {
			warns = append(warns, spec.Warning{Field: "devcontainer.json " + k, Message: msg})
		} else if !devcontainerToolKeys[k] && !knownDevcontainerKey(k) {
			warns = append(warns, spec.Warning{Field: "devcontainer.json " + k, Message: "unknown property, ignored"})
		}
	}

	warns = append(warns, dc.behaviourWarnings()...)
	composeFlavour := len(dc.DockerComposeFile) > 0
	svcName := "devcontainer"
	if composeFlavour {
		if dc.Service == "" {
			return LoadResult{}, fmt.Errorf("%s: service: required with dockerComposeFile: name the service to develop in", path)
		}
		svcName = dc.Service
	} else if dc.Image == "" && dc.Build == nil && dc.DockerFile == "" {
		return LoadResult{}, fmt.Errorf("%s: set image, build.dockerfile or dockerComposeFile", path)
	}
	svc, runWarns, err := dc.serviceModel(path, ws, vars.containerWorkspace, composeFlavour)
	if err != nil {
		return LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}
	warns = append(warns, runWarns...)
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
		return LoadResult{}, fmt.Errorf("%s: %w", path, err)
	}
	override := types.ConfigFile{Filename: path, Config: escaped, Content: content}

	env := types.Mapping(envMap(o.Environ))
	details := types.ConfigDetails{WorkingDir: ws, Environment: env}
	lc := loadContext{files: []string{path}, nameSource: o.nameSource()}
	nameDefault := loader.NormalizeProjectName(filepath.Base(ws) + "_devcontainer")
	if composeFlavour {
		files := make([]string, len(dc.DockerComposeFile))
		for i, f := range dc.DockerComposeFile {
			files[i] = resolveFrom(filepath.Dir(path), f)
		}
		lc.files = files
		cd, err := Options{Environ: o.Environ, EnvFiles: o.EnvFiles, ProjectDir: o.ProjectDir, WorkingDir: o.WorkingDir, Stdin: o.Stdin}.configDetails(files)
		if err != nil {
			return LoadResult{}, lc.detailsError(err)
		}
		details = cd
	}
	details.ConfigFiles = append(details.ConfigFiles, override)

	profiles := o.Profiles
	if len(profiles) == 0 && env["COMPOSE_PROFILES"] != "" {
		profiles = strings.Split(env["COMPOSE_PROFILES"], ",")
	}
	loadOpts := []func(*loader.Options){loader.WithProfiles(profiles), func(lo *loader.Options) {
		switch {
		case o.ProjectName != "":
			lo.SetProjectName(o.ProjectName, true)
		case env["COMPOSE_PROJECT_NAME"] != "":
			lo.SetProjectName(env["COMPOSE_PROJECT_NAME"], true)
		default:
			lo.SetProjectName(nameDefault, false)
		}
	}}
	undefined := fmt.Errorf("%s: service: %q is not defined in %s: name one of its services", path, svcName, strings.Join(dc.DockerComposeFile, ", "))
	p, err := loadChecked(ctx, details, loadOpts...)
	if err != nil {
		if composeFlavour {
			// The override may be what fails ("no image") when the service
			// does not exist: check without it to say so.
			base := details
			base.ConfigFiles = details.ConfigFiles[:len(details.ConfigFiles)-1]
			if bp, berr := loadChecked(ctx, base, loadOpts...); berr == nil {
				if _, ok := bp.Services[svcName]; !ok {
					return LoadResult{}, undefined
				}
			}
		}
		return LoadResult{}, lc.loadError(err)
	}
	if _, ok := p.Services[svcName]; !ok {
		return LoadResult{}, undefined
	}
	if composeFlavour && len(dc.RunServices) > 0 {
		if p, err = p.WithSelectedServices(append([]string{svcName}, dc.RunServices...)); err != nil {
			return LoadResult{}, fmt.Errorf("%s: runServices: %w", path, err)
		}
	}
	p, err = withTypedExtensions(p)
	if err != nil {
		return LoadResult{}, err
	}
	return LoadResult{Project: p, Warnings: warns}, nil
}

func knownDevcontainerKey(k string) bool { return devcontainerFields[k] }

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

// serviceModel renders the devcontainer settings as one Compose service.
func (dc devcontainerConfig) serviceModel(path, ws, cws string, composeFlavour bool) (map[string]any, []spec.Warning, error) {
	dir := filepath.Dir(path)
	svc := map[string]any{
		"labels": map[string]any{
			"devcontainer.local_folder": ws,
			"devcontainer.config_file":  path,
		},
	}
	var warns []spec.Warning
	if !composeFlavour {
		switch {
		case dc.Image != "":
			svc["image"] = dc.Image
		default:
			b := dc.Build
			if b == nil {
				b = &devcontainerBuild{Dockerfile: dc.DockerFile, Context: dc.Context}
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
			svc["build"] = build
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
			return nil, nil, fmt.Errorf("workspaceMount: %w", err)
		}
		svc["volumes"] = []any{m}
		ports, err := appPorts(dc.AppPort)
		if err != nil {
			return nil, nil, err
		}
		if len(ports) > 0 {
			svc["ports"] = ports
		}
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
	info, err := dc.info(cws)
	if err != nil {
		return nil, nil, err
	}
	svc[DevcontainerExtension] = info
	return svc, warns, nil
}

// info gathers the session settings and lifecycle commands as a generic
// value for the x-cornus-devcontainer extension.
func (dc devcontainerConfig) info(cws string) (map[string]any, error) {
	d := DevcontainerInfo{Devcontainer: spec.Devcontainer{WorkspaceFolder: cws, RemoteUser: dc.RemoteUser}}
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

// devcontainerVars expands devcontainer.json's ${...} variables.
type devcontainerVars struct {
	local, containerWorkspace, id string
	env                           map[string]string
}

func newDevcontainerVars(configPath, ws string, env map[string]string) *devcontainerVars {
	sum := sha256.Sum256([]byte(ws + "\x00" + configPath))
	return &devcontainerVars{local: ws, env: env, id: hex.EncodeToString(sum[:])[:16]}
}

func (v *devcontainerVars) setContainerWorkspace(cwf string, composeFlavour bool) {
	switch {
	case cwf != "":
		v.containerWorkspace = cwf
	case composeFlavour:
		v.containerWorkspace = "/"
	default:
		v.containerWorkspace = "/workspaces/" + filepath.Base(v.local)
	}
}

func (v *devcontainerVars) expand(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		name := s[i+2 : i+j]
		val, ok := v.lookup(name)
		if !ok {
			val = s[i : i+j+1] // leave unknown and container-side variables as written
		}
		b.WriteString(val)
		s = s[i+j+1:]
	}
}

func (v *devcontainerVars) lookup(name string) (string, bool) {
	switch name {
	case "localWorkspaceFolder":
		return v.local, true
	case "localWorkspaceFolderBasename":
		return filepath.Base(v.local), true
	case "containerWorkspaceFolder":
		return v.containerWorkspace, v.containerWorkspace != ""
	case "containerWorkspaceFolderBasename":
		return filepath.Base(v.containerWorkspace), v.containerWorkspace != ""
	case "devcontainerId":
		return v.id, true
	}
	for _, prefix := range []string{"localEnv:", "env:"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			key, def, _ := strings.Cut(rest, ":")
			if val, ok := v.env[key]; ok {
				return val, true
			}
			return def, true
		}
	}
	return "", false
}

func (v *devcontainerVars) expandAll(x any) any {
	switch t := x.(type) {
	case string:
		return v.expand(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = v.expandAll(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = v.expandAll(e)
		}
		return out
	}
	return x
}

// escapeDollars protects already-expanded devcontainer values from Compose
// interpolation, which would otherwise read "$HOME" or "$!" as variables.
func escapeDollars(x any) any {
	switch t := x.(type) {
	case string:
		return strings.ReplaceAll(t, "$", "$$")
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = escapeDollars(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = escapeDollars(e)
		}
		return out
	}
	return x
}

// stringList accepts a string or an array of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = []string{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return fmt.Errorf("expected a string or an array of strings")
	}
	*l = ss
	return nil
}

func stringsOf(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
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

// devcontainerFields are the JSON names of devcontainerConfig's fields.
var devcontainerFields = func() map[string]bool {
	t := reflect.TypeFor[devcontainerConfig]()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[name] = true
	}
	return names
}()

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

// behaviourWarnings names the devcontainer keys that change behaviour in
// the devcontainer CLI and that cornus cannot honor.
func (dc devcontainerConfig) behaviourWarnings() []spec.Warning {
	var out []spec.Warning
	warn := func(key, msg string) {
		out = append(out, spec.Warning{Field: "devcontainer.json " + key, Message: msg})
	}
	user := dc.RemoteUser
	if user == "" {
		user = dc.ContainerUser
	}
	// The devcontainer CLI syncs a non-root user's UID/GID to the local
	// user's on Linux (by default) with a derived image.
	if user != "" && user != "root" && user != "0" && (dc.UpdateRemoteUserUID == nil || *dc.UpdateRemoteUserUID) {
		warn("updateRemoteUserUID", fmt.Sprintf("the devcontainer CLI gives %q your UID/GID through a derived image; cornus builds no images yet, "+
			"so files in bind mounts keep the image user's ownership (set updateRemoteUserUID: false to accept that)", user))
	}
	switch dc.ShutdownAction {
	case "", "none":
	default:
		warn("shutdownAction", dc.ShutdownAction+": cornus has no editor session to close; containers run until `cornus compose down` (or Ctrl-C on a foreground up)")
	}
	if dc.UserEnvProbe != "" && dc.UserEnvProbe != "none" {
		warn("userEnvProbe", dc.UserEnvProbe+": cornus does not probe the user's shell for environment variables; containerEnv and remoteEnv apply as written")
	}
	return out
}
