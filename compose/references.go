package compose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// loadChecked runs compose-go's loader on details after checking every
// file it would read by itself, so that none can be a device, a FIFO or
// too large: include: and extends: file: before loading, env_file and
// label_file after (the loader is told to leave those to us).
func loadChecked(ctx context.Context, details types.ConfigDetails, opts ...func(*loader.Options)) (*types.Project, error) {
	if err := checkReferencedFiles(details); err != nil {
		return nil, err
	}
	opts = append(slices.Clone(opts), func(lo *loader.Options) {
		lo.SkipResolveEnvironment = true
		lo.SkipResolveLabels = true
	})
	p, err := loader.LoadWithContext(ctx, details, opts...)
	if err != nil {
		return nil, err
	}
	return withServiceFilesResolved(p)
}

// withServiceFilesResolved checks each service's env_file and label_file
// entries, then has compose-go read them. A missing file is left to
// compose-go, which ignores it or reports it as the entry says. The check
// is a stat (compose-go opens the files by path itself): a file replaced
// or grown after it is not seen.
func withServiceFilesResolved(p *types.Project) (*types.Project, error) {
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		s := p.Services[name]
		specs := []types.ContainerSpec{s.ContainerSpec}
		for _, h := range s.PreStart {
			specs = append(specs, h.ContainerSpec)
		}
		for _, cs := range specs {
			for _, f := range cs.EnvFiles {
				if err := checkFile(f.Path, boundedfile.EnvFile); err != nil {
					return nil, fmt.Errorf("services.%s.env_file: %w", name, err)
				}
			}
			for _, f := range cs.LabelFiles {
				if err := checkFile(f, boundedfile.EnvFile); err != nil {
					return nil, fmt.Errorf("services.%s.label_file: %w", name, err)
				}
			}
		}
	}
	p, err := p.WithServicesEnvironmentResolved(false)
	if err != nil {
		return nil, err
	}
	return p.WithServicesLabelsResolved(false)
}

// checkFile reports a boundedfile refusal of path; other errors (a missing
// file) are left for whoever reads it to report in its own words.
func checkFile(path string, k boundedfile.Kind) error {
	if err := boundedfile.Check(path, k); isRefusal(err) {
		return err
	}
	return nil
}

func isRefusal(err error) bool {
	return errors.Is(err, boundedfile.ErrNotRegular) || errors.Is(err, boundedfile.ErrTooLarge)
}

// checkReferencedFiles checks the files compose-go reads by itself while
// loading: include: paths (and their env_file, or the default .env next to
// them) and extends: file:, following those files in turn. It is a
// pre-pass over the raw YAML, and errs towards checking less rather than
// refusing a valid project:
//   - paths are interpolated with the project environment only: a variable
//     set only by an include's env_file is not seen;
//   - a path that fails to interpolate, a document that does not parse and
//     a missing file are left for compose-go to report;
//   - a file replaced between this check and compose-go's read is not seen.
func checkReferencedFiles(d types.ConfigDetails) error {
	c := refChecker{env: d.Environment, seen: map[string]bool{}}
	for _, f := range d.ConfigFiles {
		if err := c.refs(f.Content, d.WorkingDir); err != nil {
			return err
		}
	}
	return nil
}

type refChecker struct {
	env  types.Mapping
	seen map[string]bool // Compose files already followed (include cycles)
}

// refs checks the files named by a Compose file (each of its YAML
// documents) whose relative paths resolve against base (compose-go's
// working directory for it).
func (c *refChecker) refs(content []byte, base string) error {
	if !bytes.Contains(content, []byte("include")) && !bytes.Contains(content, []byte("extends")) {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for {
		var doc refDoc
		if dec.Decode(&doc) != nil {
			return nil // the end, or an error compose-go reports
		}
		if err := c.doc(doc, base); err != nil {
			return err
		}
	}
}

// refDoc is what a Compose document says about other files.
type refDoc struct {
	Include  []any `yaml:"include"`
	Services map[string]struct {
		Extends any `yaml:"extends"`
	} `yaml:"services"`
}

func (c *refChecker) doc(doc refDoc, base string) error {
	for _, entry := range doc.Include {
		paths, envFiles, projectDir := includeEntry(entry)
		dir, _ := c.path(base, projectDir)
		for _, p := range paths {
			f, ok := c.path(base, p)
			if !ok {
				continue
			}
			if dir == "" {
				dir = filepath.Dir(f)
			}
			if err := c.compose(f, dir); err != nil {
				return fmt.Errorf("include: %w", err)
			}
		}
		if len(envFiles) == 0 && dir != "" {
			envFiles = []string{filepath.Join(dir, ".env")}
		}
		for _, e := range envFiles {
			if f, ok := c.path(base, e); ok {
				if err := checkFile(f, boundedfile.EnvFile); err != nil {
					return fmt.Errorf("include: env_file: %w", err)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Services)) {
		ext, _ := doc.Services[name].Extends.(map[string]any)
		file, _ := ext["file"].(string)
		if f, ok := c.path(base, file); ok {
			if err := c.compose(f, filepath.Dir(f)); err != nil {
				return fmt.Errorf("services.%s.extends.file: %w", name, err)
			}
		}
	}
	return nil
}

// compose reads Compose file f (bounded) and checks what it names.
func (c *refChecker) compose(f, base string) error {
	if c.seen[f] {
		return nil
	}
	c.seen[f] = true
	b, err := boundedfile.Read(f, boundedfile.ComposeFile)
	if err != nil {
		if isRefusal(err) {
			return err
		}
		return nil
	}
	return c.refs(b, base)
}

// path interpolates p and makes it absolute against base; false when
// there is nothing to check.
func (c *refChecker) path(base, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if strings.Contains(p, "$") {
		s, err := template.Substitute(p, func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if err != nil || s == "" {
			return "", false
		}
		p = s
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return p, true
}

// includeEntry reads one include: entry, short (a path) or long syntax.
func includeEntry(entry any) (paths, envFiles []string, projectDir string) {
	switch e := entry.(type) {
	case string:
		return []string{e}, nil, ""
	case map[string]any:
		projectDir, _ = e["project_directory"].(string)
		return stringsOf(e["path"]), stringsOf(e["env_file"]), projectDir
	}
	return nil, nil, ""
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
