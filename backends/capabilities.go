package backends

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// Capabilities say what a backend honors and offers. Every spec.App field
// is honored unless listed in Gaps; a gap on "resources" covers every
// resources.* path, and one on "networkMode" every value of it, where
// "networkMode=none" is that value alone (ModeFields lists the fields with
// such values). Features lists the optional interfaces it implements
// (FeaturesOf).
type Capabilities struct {
	// Gaps maps spec field paths (or field=value) the backend cannot
	// honor to the reason.
	Gaps map[string]string
	// Refused maps spec field paths (or field=value) the backend refuses,
	// up failing with a NotImplemented error that names the field, to the
	// reason: where running without the field would break the app (a pod
	// cannot join another pod's network namespace, and one that runs
	// without it cannot reach what that one serves on loopback).
	Refused map[string]string
	// Features are the optional interfaces (optional.go) it implements:
	// FeaturesOf(b), never a list of its own.
	Features []Feature
	// NativeHealthcheck: the runtime runs healthchecks itself; otherwise
	// the engine runs them through Exec.
	NativeHealthcheck bool
	// LoopbackRegistries: PullImage speaks plain HTTP to a registry on a
	// loopback address (127.0.0.1:PORT/...), as dockerd always does; a
	// test can then serve one.
	LoopbackRegistries bool
	// Sidecars: the backend runs a replica's companion (the caretaker)
	// next to it in one unit, from ContainerSpec.Sidecar (a native
	// sidecar in its pod), instead of as a container of its own whose
	// network namespace the replica joins.
	Sidecars bool
}

// Has reports whether the backend declares feature f.
func (c Capabilities) Has(f Feature) bool { return slices.Contains(c.Features, f) }

// Gap returns the reason path (or the field or parent field it lies
// under) is not honored.
func (c Capabilities) Gap(path string) (string, bool) {
	k, ok := c.GapKey(path)
	return c.Gaps[k], ok
}

// GapKey returns the declared gap that covers path: path itself, then for
// "field=value" the field, then each parent ("a.b.c", "a.b", "a").
func (c Capabilities) GapKey(path string) (string, bool) { return coveringKey(c.Gaps, path) }

// RefusedKey returns the declared refusal that covers path, as GapKey.
func (c Capabilities) RefusedKey(path string) (string, bool) { return coveringKey(c.Refused, path) }

// coveringKey returns the key of m that covers path: path itself, then for
// "field=value" the field, then each parent.
func coveringKey(m map[string]string, path string) (string, bool) {
	for p := path; p != ""; {
		if _, ok := m[p]; ok {
			return p, true
		}
		if i := strings.IndexByte(p, '='); i >= 0 {
			p = p[:i]
			continue
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return "", false
}

// ModeFields are the namespace-mode fields whose values a backend may
// honor one by one: UsedFields reports "networkMode=host" besides
// "networkMode" (the value before any ":", so container:x and service:x
// are "container" and "service").
var ModeFields = []string{"networkMode", "pidMode", "ipcMode", "utsMode", "usernsMode", "cgroupnsMode"}

// engineFields are handled by the engine for every backend.
var engineFields = map[string]bool{
	"replicas": true, "dependsOn": true, "hooks": true, "devcontainer": true,
	"pullPolicy": true, "containerName": true,
}

// UsedFields lists the spec paths an app sets, for comparison with a
// backend's gaps: top-level fields, and one level down inside structs and
// lists of structs ("healthcheck.startInterval", "volumes.subpath",
// "resources.limits.memory" two levels for resources), three of values: a
// retry count (restart.maxRetries), a command without an entrypoint
// (command.overrideOnly) and each kind of security option
// (securityOpt.seccomp, securityOpt.systempaths, ...), a privileged hook
// (hooks.privileged), and each mode field's value (networkMode=none,
// pidMode=host, ...).
func UsedFields(a spec.App) []string {
	set := map[string]bool{}
	v := reflect.ValueOf(a)
	t := v.Type()
	for i := range t.NumField() {
		name := yamlName(t.Field(i))
		if name == "" || engineFields[name] || v.Field(i).IsZero() {
			continue
		}
		set[name] = true
		collectNested(name, v.Field(i), set, 2)
	}
	// A restart policy's retry count (on-failure:N) is a path of its own:
	// a runtime may restart by policy yet not stop after N tries.
	if r, err := spec.ParseRestart(a.Restart); err == nil && r.MaxRetries > 0 {
		set["restart.maxRetries"] = true
	}
	// So is a command given without an entrypoint: a runtime that takes
	// one process line cannot keep the image's entrypoint before it.
	if a.Command != nil && a.Entrypoint == nil {
		set["command.overrideOnly"] = true
	}
	// So is each kind of security option (securityOpt.systempaths, ...).
	for _, o := range a.SecurityOpt {
		if k, _, _ := strings.Cut(strings.Replace(o, ":", "=", 1), "="); k != "" {
			set["securityOpt."+k] = true
		}
	}
	// So is a hook run privileged: the engine runs hooks through Exec,
	// which a runtime may not be able to raise above the container's.
	if h := a.Hooks; h != nil && slices.ContainsFunc(slices.Concat(h.PostCreate, h.PostStart, h.PostAttach, h.PreStop), func(h spec.Hook) bool { return h.Privileged }) {
		set["hooks.privileged"] = true
	}
	// So is the value of a namespace mode (networkMode=none).
	modes := map[string]string{"networkMode": a.NetworkMode, "pidMode": a.PidMode, "ipcMode": a.IpcMode,
		"utsMode": a.UTSMode, "usernsMode": a.UsernsMode, "cgroupnsMode": a.CgroupnsMode}
	for _, f := range ModeFields {
		if kind, _, _ := strings.Cut(modes[f], ":"); kind != "" {
			set[f+"="+kind] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func collectNested(prefix string, v reflect.Value, set map[string]bool, depth int) {
	if depth == 0 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectNested(prefix, v.Elem(), set, depth)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			for i := range v.Len() {
				collectNested(prefix, v.Index(i), set, depth)
			}
		}
	case reflect.Struct:
		if !strings.HasPrefix(v.Type().PkgPath(), "github.com/cornus-dev/cornus/spec") {
			return
		}
		for i := range v.NumField() {
			name := yamlName(v.Type().Field(i))
			if name == "" || v.Field(i).IsZero() {
				continue
			}
			p := prefix + "." + name
			set[p] = true
			if prefix == "resources" {
				collectNested(p, v.Field(i), set, depth-1)
			}
		}
	}
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// Unhonored returns one warning per field (or field=value) of the app the
// backend cannot honor, naming field, service and backend. Paths under a
// reported gap are not repeated.
func Unhonored(backend string, caps Capabilities, a spec.App) []spec.Warning {
	var out []spec.Warning
	reported := map[string]bool{}
	for _, p := range UsedFields(a) {
		reason, ok := caps.Gap(p)
		if !ok {
			continue
		}
		covered := false
		for r := range reported {
			if strings.HasPrefix(p, r+".") || strings.HasPrefix(p, r+"=") {
				covered = true
			}
		}
		if covered {
			continue
		}
		reported[p] = true
		out = append(out, spec.Warning{Service: a.Name, Field: p, Message: "not supported by the " + backend + " backend (" + reason + "); ignored"})
	}
	return out
}

// Refusal is the error for the first field of a that the backend refuses
// (Capabilities.Refused), nil when it refuses none: said before anything
// is made, since running the app without the field would break it.
func Refusal(backend string, caps Capabilities, a spec.App) error {
	for _, p := range UsedFields(a) {
		if key, ok := caps.RefusedKey(p); ok {
			return fmt.Errorf("services.%s: %s: not supported by the %s backend (%s): %w", a.Name, p, backend, caps.Refused[key], errdefs.ErrNotImplemented)
		}
	}
	return nil
}

// GapUpdate is the update gap (deploy.update_config) of a backend whose
// replicas the engine replaces itself.
const GapUpdate = "the engine replaces a changed app's replicas all at once, each stopped before its replacement starts (the kubernetes backend's Deployments roll them out as update says)"
