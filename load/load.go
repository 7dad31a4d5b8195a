package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cornus-dev/cornus/compose"
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
}

// Compose loads Compose files (or a devcontainer.json) and translates them.
// With no -f, no COMPOSE_FILE and no Compose file found, a devcontainer
// config in the working directory (.devcontainer/devcontainer.json or
// .devcontainer.json) is used.
func Compose(ctx context.Context, o compose.Options) (Result, error) {
	if o.Devcontainer == "" && len(o.Files) == 0 && !hasComposeFileEnv(o.Environ) {
		if _, err := o.ComposeFiles(); err != nil {
			if dc := FindDevcontainer(o.WorkingDir); dc != "" {
				o.Devcontainer = dc
			}
		}
	}
	lr, err := compose.Load(ctx, o)
	if err != nil {
		return Result{}, err
	}
	p, warns := translate.Translate(lr.Project)
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
	return Result{Project: p, Warnings: warns, Dir: lr.Project.WorkingDir}, nil
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

// FindDevcontainer returns the devcontainer config in dir, or "".
func FindDevcontainer(dir string) string {
	for _, rel := range []string{".devcontainer/devcontainer.json", ".devcontainer.json"} {
		f := filepath.Join(dir, rel)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			return f
		}
	}
	return ""
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
	switch {
	case devcontainer != "":
		return devcontainer
	}
	return strings.Join(files, ", ")
}
