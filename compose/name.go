package compose

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"go.yaml.in/yaml/v3"
)

// ErrNeedsLoad means the project name can only be known by loading the
// project (a devcontainer, or a name compose-go must work out itself).
var ErrNeedsLoad = errors.New("project name needs a full load")

// ProjectName works out the project name as Load would — -p, then
// COMPOSE_PROJECT_NAME (environment or env files), then the files' top-level
// name:, then the project directory's name — without loading the project.
// Commands that act on what is deployed (ps, logs, exec) need nothing more,
// and skipping compose-go's full load and schema validation keeps them fast.
func ProjectName(o Options) (string, error) {
	if o.ProjectName != "" {
		return o.ProjectName, nil
	}
	if o.Devcontainer != "" {
		return "", ErrNeedsLoad
	}
	files, err := o.ComposeFiles()
	if err != nil {
		return "", err
	}
	if slices.Contains(files, "-") {
		return "", ErrNeedsLoad // stdin can be read only once: by the load
	}
	dir, err := o.projectDir(files)
	if err != nil {
		return "", err
	}
	env, err := o.environment(dir)
	if err != nil {
		return "", err
	}
	if n := env["COMPOSE_PROJECT_NAME"]; n != "" {
		return n, nil
	}
	for _, f := range files {
		raw, err := readCompose(f)
		if err != nil {
			return "", composeFileError(f, err)
		}
		var doc struct {
			Name string `yaml:"name"`
		}
		if yaml.Unmarshal(raw, &doc) != nil {
			return "", ErrNeedsLoad // let the full load report the syntax error
		}
		if doc.Name == "" {
			continue
		}
		if strings.Contains(doc.Name, "$") {
			name, err := template.Substitute(doc.Name, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if err != nil {
				return "", ErrNeedsLoad
			}
			return name, nil
		}
		return doc.Name, nil
	}
	return loader.NormalizeProjectName(filepath.Base(dir)), nil
}
