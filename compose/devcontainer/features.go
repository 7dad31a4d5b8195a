package devcontainer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/spec"
)

// feature is a local dev container feature: a folder beside
// devcontainer.json with devcontainer-feature.json and install.sh.
type feature struct {
	ref     string // as devcontainer.json names it ("./hello")
	dir     string
	ID      string                   `json:"id"`
	Options map[string]featureOption `json:"options"`
	Env     map[string]string        `json:"containerEnv"`
	After   []string                 `json:"installsAfter"`
	values  map[string]any           // what devcontainer.json sets
}

type featureOption struct {
	Default any `json:"default"`
}

// features reads devcontainer.json's features (raw, in file order) from
// dir. A feature from a registry or a URL is an error naming it: nothing
// here reaches a registry.
func features(raw json.RawMessage, dir string) ([]feature, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	refs, values, err := orderedObject(raw)
	if err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	var out []feature
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "./") && !strings.HasPrefix(ref, "../") {
			return nil, fmt.Errorf("features: %q comes from a registry or a URL, which cornus does not fetch (no registry is reached): copy the feature into a folder beside devcontainer.json and name it \"./FOLDER\"", ref)
		}
		f := feature{ref: ref, dir: filepath.Join(dir, ref)}
		data, err := boundedfile.Read(filepath.Join(f.dir, "devcontainer-feature.json"), boundedfile.DevcontainerFile)
		if err != nil {
			return nil, fmt.Errorf("features: %s: %w", ref, err)
		}
		if err := compose.UnmarshalJSONC(data, &f); err != nil {
			return nil, fmt.Errorf("features: %s: devcontainer-feature.json:%w", ref, err)
		}
		if _, err := os.Stat(filepath.Join(f.dir, "install.sh")); err != nil {
			return nil, fmt.Errorf("features: %s: %w", ref, err)
		}
		if err := json.Unmarshal(values[ref], &f.values); err != nil {
			var version string // a string is shorthand for the version option
			if json.Unmarshal(values[ref], &version) != nil {
				f.values = nil
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// orderedObject reads a JSON object's keys in file order.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	var values map[string]json.RawMessage
	if err := json.Unmarshal(raw, &values); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, nil, err
		}
	}
	return keys, values, nil
}

// installOrder orders features as the spec does: those named in
// overrideFeatureInstallOrder first, in that order; then each after the
// ones it installsAfter, else in file order.
func installOrder(fs []feature, override []string) []feature {
	var out []feature
	placed := map[string]bool{}
	place := func(f feature) {
		if !placed[f.ref] {
			placed[f.ref] = true
			out = append(out, f)
		}
	}
	for _, name := range override {
		for _, f := range fs {
			if f.ref == name || f.ID == name {
				place(f)
			}
		}
	}
	for len(out) < len(fs) {
		progress := false
		for _, f := range fs {
			if placed[f.ref] {
				continue
			}
			ready := !slices.ContainsFunc(f.After, func(id string) bool {
				return slices.ContainsFunc(fs, func(g feature) bool { return (g.ID == id || g.ref == id) && !placed[g.ref] })
			})
			if ready {
				place(f)
				progress = true
			}
		}
		if !progress { // a cycle of installsAfter: file order breaks it
			for _, f := range fs {
				place(f)
			}
		}
	}
	return out
}

var notEnvChar = regexp.MustCompile(`[^A-Za-z0-9_]`)

// optionEnv is the variable an option reaches install.sh as (the
// spec's rule: non-word characters become _, a leading digit or _ run
// becomes one _, upper case).
func optionEnv(name string) string {
	v := notEnvChar.ReplaceAllString(name, "_")
	v = regexp.MustCompile(`^[\d_]+`).ReplaceAllString(v, "_")
	return strings.ToUpper(v)
}

// stage is the build stage that installs f as user root, run as
// remoteUser/containerUser say.
func (f feature) stage(i int, remoteUser, containerUser string) (spec.BuildStage, error) {
	names := make([]string, 0, len(f.Options))
	for n := range f.Options {
		names = append(names, n)
	}
	slices.Sort(names)
	var env []string
	for _, n := range names {
		v, ok := f.values[n]
		if !ok {
			v = f.Options[n].Default
		}
		if v == nil {
			continue
		}
		s := fmt.Sprint(v)
		if strings.ContainsAny(s, "\n\r") {
			return spec.BuildStage{}, fmt.Errorf("features: %s: option %s: a value with a line break cannot reach install.sh", f.ref, n)
		}
		env = append(env, optionEnv(n)+"="+shellQuote(s))
	}
	home := func(u string) string {
		return `"$(awk -F: -v u=` + shellQuote(u) + ` '$1==u{print $6}' /etc/passwd)"`
	}
	env = append(env, "_REMOTE_USER="+shellQuote(remoteUser), "_REMOTE_USER_HOME="+home(remoteUser),
		"_CONTAINER_USER="+shellQuote(containerUser), "_CONTAINER_USER_HOME="+home(containerUser))
	tmp := fmt.Sprintf("/tmp/cornus-features/%d", i)
	var b strings.Builder
	fmt.Fprintf(&b, "USER root\nCOPY %s/ %s/\n", spec.StageDir(i), tmp)
	fmt.Fprintf(&b, "RUN cd %s && chmod +x ./install.sh && env %s ./install.sh && rm -rf %s\n", tmp, strings.Join(env, " "), tmp)
	for _, k := range slices.Sorted(maps.Keys(f.Env)) {
		fmt.Fprintf(&b, "ENV %s=%s\n", k, jsonQuote(f.Env[k]))
	}
	return spec.BuildStage{Name: "feature " + f.ref, Dir: f.dir, Instructions: b.String()}, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
