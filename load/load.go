package load

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/compose/devcontainer"
	"github.com/cornus-dev/cornus/spec"
	"github.com/cornus-dev/cornus/translate"
)

// Result is a validated project and every warning about what it could not
// carry over.
type Result struct {
	Project  spec.Project
	Warnings []spec.Warning
	// Dir is the project directory: where relative paths were resolved.
	Dir string
	// Source, when the files were discovered rather than named, says which
	// were chosen ("Using compose.yaml"), for the CLI to print.
	Source string
	// Profiles are the profiles the Compose files' services name, active
	// or not, sorted (config --profiles).
	Profiles []string
}

// Compose loads Compose files (or a devcontainer.json) and translates them.
// With no -f, no COMPOSE_FILE and no --config, the nearest directory
// holding a Compose file or a devcontainer config, from the working
// directory up, is used (compose.Discover); Result.Source says which.
func Compose(ctx context.Context, o compose.Options) (Result, error) {
	source := ""
	switch {
	case o.Devcontainer != "":
	case len(o.Files) == 1 && compose.IsDevcontainerFile(o.Files[0]):
		o.Devcontainer, o.Files = o.Files[0], nil // -f path/devcontainer.json
	case len(o.Files) > 1 && slices.ContainsFunc(o.Files, compose.IsDevcontainerFile):
		return Result{}, fmt.Errorf("-f %s: a devcontainer.json cannot be combined with Compose files; name them in its dockerComposeFile", strings.Join(o.Files, " -f "))
	case len(o.Files) == 0 && !hasComposeFileEnv(o.Environ):
		d, err := compose.Discover(o.WorkingDir)
		if err != nil {
			return Result{}, err
		}
		o.Files, o.Devcontainer = d.Files, d.Devcontainer
		source = usingLine(o.WorkingDir, d)
	}
	load := compose.Load
	if o.Devcontainer != "" {
		load = devcontainer.Load
	}
	lr, err := load(ctx, o)
	if err != nil {
		return Result{}, err
	}
	if o.Modify != nil {
		if err := o.Modify(lr.Project); err != nil {
			return Result{}, err
		}
	}
	if err := noEnabledServices(lr.Project); err != nil {
		return Result{}, fmt.Errorf("%s: %w", describeFiles(lr.Project.ComposeFiles, o.Devcontainer), err)
	}
	p, warns := translate.Translate(lr.Project)
	p.ConfigFiles, p.WorkingDir = lr.Project.ComposeFiles, lr.Project.WorkingDir
	warns = append(lr.Warnings, warns...)
	translate.SortWarnings(warns)
	if err := p.Validate(); err != nil {
		// Name fields as the Compose file spells them, not as the spec does.
		var ve *spec.ValidationError
		if errors.As(err, &ve) {
			for i := range ve.Problems {
				ve.Problems[i].Path = translate.ComposePath(ve.Problems[i].Path)
			}
		}
		return Result{}, fmt.Errorf("%s: %w", describeFiles(lr.Project.ComposeFiles, o.Devcontainer), err)
	}
	return Result{Project: p, Warnings: warns, Dir: lr.Project.WorkingDir, Source: source, Profiles: profiles(lr.Project)}, nil
}

// Spec loads a native deploy.yaml.
func Spec(file string) (Result, error) {
	p, err := spec.LoadFile(file)
	if err != nil {
		return Result{}, err
	}
	abs, _ := filepath.Abs(file)
	return Result{Project: p, Dir: filepath.Dir(abs)}, nil
}

// usingLine names what discovery chose, relative to the working dir, when
// the choice could surprise: a devcontainer, a file in a parent
// directory, or another candidate beside it. A compose.yaml in the working
// directory goes without saying, as with docker compose.
func usingLine(wd string, d compose.Discovery) string {
	if d.Devcontainer == "" && d.Also == "" && filepath.Dir(d.Files[0]) == filepath.Clean(wd) {
		return ""
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(wd, p); err == nil && len(r) < len(p) {
			return r
		}
		return p
	}
	if d.Devcontainer != "" {
		return "Using " + rel(d.Devcontainer)
	}
	names := make([]string, len(d.Files))
	for i, f := range d.Files {
		names[i] = rel(f)
	}
	line := "Using " + strings.Join(names, " and ")
	if d.Also != "" {
		line += " (" + rel(d.Also) + " is there too: --config selects it)"
	}
	return line
}

func hasComposeFileEnv(environ []string) bool {
	for _, kv := range environ {
		if len(kv) > len("COMPOSE_FILE=") && kv[:len("COMPOSE_FILE=")] == "COMPOSE_FILE=" {
			return true
		}
	}
	return false
}

func describeFiles(files []string, devcontainer string) string {
	if devcontainer != "" {
		return devcontainer
	}
	return strings.Join(files, ", ")
}
