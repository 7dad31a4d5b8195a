package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// appDocument is the single-app form of deploy.yaml: one app at the top
// level, its name doubling as the project name.
type appDocument struct {
	Name string `yaml:"name"`
	App  `yaml:",inline"`
}

// LoadFile reads and validates a deploy.yaml (YAML or JSON). Relative bind
// sources and secret/config files resolve against the file's directory.
func LoadFile(path string) (Project, error) {
	data, err := boundedfile.Read(path, boundedfile.SpecFile)
	if err != nil {
		return Project{}, fmt.Errorf("read deploy spec: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Project{}, fmt.Errorf("read deploy spec: %w", err)
	}
	return Load(path, filepath.Dir(abs), data)
}

// Load parses a deploy spec. file names the source in errors; dir is where
// relative paths resolve. Unknown fields, type mismatches and validation
// problems are all reported together. The result is normalized (see
// [Project.Normalize]) and valid.
func Load(file, dir string, data []byte) (Project, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Project{}, fmt.Errorf("%s: empty document: expected `services:` (a project) or `image:` (a single app)", file)
		}
		return Project{}, fmt.Errorf("%s: %s", file, trimYAMLError(err))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return Project{}, fmt.Errorf("%s: expected a mapping at the top level, got %s", file, kindName(root))
	}

	var p Project
	var probs Problems
	if hasKey(root, "services") {
		checkNode(root, reflect.TypeFor[Project](), "", &probs)
		if len(probs) > 0 {
			return Project{}, probs.Err(file)
		}
		if err := root.Decode(&p); err != nil {
			return Project{}, fmt.Errorf("%s: %s", file, trimYAMLError(err))
		}
	} else {
		checkNode(root, reflect.TypeFor[appDocument](), "", &probs)
		if len(probs) > 0 {
			return Project{}, probs.Err(file)
		}
		var a appDocument
		if err := root.Decode(&a); err != nil {
			return Project{}, fmt.Errorf("%s: %s", file, trimYAMLError(err))
		}
		p = a.project()
	}
	p = p.withPathsResolved(dir).Normalize()
	if err := p.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			ve.File = file
		}
		return Project{}, err
	}
	return p, nil
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// project turns a single-app document into a project of one service,
// declaring the networks and volumes the app refers to.
func (a appDocument) project() Project {
	p := Project{Name: a.Name, Services: map[string]App{a.Name: a.App}}
	for _, n := range a.Networks {
		if p.Networks == nil {
			p.Networks = map[string]Network{}
		}
		p.Networks[n.Name] = Network{}
	}
	for _, v := range a.Volumes {
		if v.Source == "" {
			continue
		}
		if p.Volumes == nil {
			p.Volumes = map[string]Volume{}
		}
		p.Volumes[v.Source] = Volume{Driver: v.Driver, DriverOpts: v.DriverOpts}
	}
	return p
}

// withPathsResolved returns a copy with relative bind sources, secret or
// config files and credential source files made absolute against dir.
func (p Project) withPathsResolved(dir string) Project {
	out := p.clone()
	for name, a := range out.Services {
		for i, m := range a.Mounts {
			a.Mounts[i].Source = resolvePath(dir, m.Source)
		}
		for i, s := range a.Secrets {
			if s.File != "" {
				a.Secrets[i].File = resolvePath(dir, s.File)
			}
		}
		for i, c := range a.Configs {
			if c.File != "" {
				a.Configs[i].File = resolvePath(dir, c.File)
			}
		}
		for _, c := range a.Credentials {
			if c.Source != nil {
				*c.Source = c.Source.InDir(dir) // the copy's own
			}
		}
		out.Services[name] = a
	}
	return out
}

func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return filepath.Join(dir, p)
}
