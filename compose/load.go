package compose

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/compose-spec/compose-go/v2/utils"

	"github.com/cornus-dev/cornus/spec"
)

// Options select and configure what Load reads. They mirror docker
// compose's global flags; Environ stands for the process environment so
// that loading never reads os.Environ behind the caller's back.
type Options struct {
	Files        []string  // -f, in order; empty: compose.yaml etc. found from WorkingDir upward
	ProjectName  string    // -p; else COMPOSE_PROJECT_NAME, then `name:`, then the directory name
	ProjectDir   string    // --project-directory; default: the first file's directory
	Profiles     []string  // --profile; else COMPOSE_PROFILES
	EnvFiles     []string  // --env-file; default: .env in the project directory
	Environ      []string  // KEY=VALUE pairs, normally os.Environ()
	WorkingDir   string    // where relative -f paths and default discovery start
	Devcontainer string    // path to a devcontainer.json to load instead of (or on top of) Compose files
	Stdin        io.Reader // what `-f -` reads; nil: os.Stdin
	// LocalUser is the client's user, whose UID/GID a devcontainer's
	// non-root remote user gets in a derived image (updateRemoteUserUID,
	// as the devcontainer CLI does on Linux); nil: no update.
	LocalUser *LocalUser
	// Modify, when set, changes the loaded project before it is
	// translated (compose run's overrides of one service).
	Modify func(*types.Project) error
}

// LocalUser is a user's numeric IDs on the client.
type LocalUser struct {
	UID, GID int
}

// LoadResult is a loaded Compose project plus what the loader could not
// carry over into it.
type LoadResult struct {
	Project  *types.Project
	Warnings []spec.Warning
}

// Load reads Compose files into a compose-go
// project: overrides merged, include and extends resolved, profiles applied,
// variables interpolated, env_file read, and cornus's x-cornus-* extensions
// parsed and validated into typed values.
func Load(ctx context.Context, o Options) (res LoadResult, err error) {
	defer recoverLoad(&err)
	if o.Devcontainer != "" {
		return LoadResult{}, fmt.Errorf("load %s: a devcontainer.json is loaded by package compose/devcontainer", o.Devcontainer)
	}
	files, err := o.ComposeFiles()
	if err != nil {
		return LoadResult{}, err
	}
	lc := loadContext{files: files, nameSource: o.nameSource()}
	details, err := o.configDetails(files)
	if err != nil {
		return LoadResult{}, lc.detailsError(err)
	}
	p, err := loadChecked(ctx, details, o.loaderOptions(details)...)
	if err != nil {
		return LoadResult{}, lc.loadError(err)
	}
	for _, f := range details.ConfigFiles {
		p.ComposeFiles = append(p.ComposeFiles, f.Filename)
	}
	p, err = withTypedExtensions(p)
	if err != nil {
		return LoadResult{}, err
	}
	return LoadResult{Project: p}, nil
}

// loaderOptions are docker compose's choices for the loader: profiles
// (--profile, else COMPOSE_PROFILES) and the project name (-p, else
// COMPOSE_PROJECT_NAME, else the files' name:, else the directory's).
func (o Options) loaderOptions(d types.ConfigDetails) []func(*loader.Options) {
	env := d.Environment
	profiles := o.Profiles
	if len(profiles) == 0 {
		for _, s := range strings.Split(env["COMPOSE_PROFILES"], ",") {
			profiles = append(profiles, strings.TrimSpace(s))
		}
	}
	return []func(*loader.Options){loader.WithProfiles(profiles), func(lo *loader.Options) {
		switch {
		case o.ProjectName != "":
			lo.SetProjectName(o.ProjectName, true)
		case env["COMPOSE_PROJECT_NAME"] != "":
			lo.SetProjectName(env["COMPOSE_PROJECT_NAME"], true)
		default: // a name: in the files takes precedence over this one
			lo.SetProjectName(loader.NormalizeProjectName(filepath.Base(d.WorkingDir)), false)
		}
		lo.ConvertWindowsPaths = lo.ResolvePaths && utils.StringToBool(env["COMPOSE_CONVERT_WINDOWS_PATHS"])
	}}
}

// recoverLoad turns a panic in compose-go into *err: compose-go is large
// and parses untrusted input, and a bug there must never crash the caller
// (the API server serves many clients).
func recoverLoad(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("load compose project: internal error on this input (please report it): %v", r)
	}
}

// nameSource says where an explicit project name comes from, for errors.
func (o Options) nameSource() string {
	switch {
	case o.ProjectName != "":
		return "-p"
	case envMap(o.Environ)["COMPOSE_PROJECT_NAME"] != "":
		return "COMPOSE_PROJECT_NAME"
	}
	return ""
}

// ComposeFiles returns the Compose files Load would read: -f, else
// COMPOSE_FILE, else the first default name found upward from WorkingDir.
func (o Options) ComposeFiles() ([]string, error) { return o.composeFiles(o.Files) }

func (o Options) composeFiles(files []string) ([]string, error) {
	if len(files) > 0 {
		return o.absPaths(files), nil
	}
	env := envMap(o.Environ)
	if f, ok := env["COMPOSE_FILE"]; ok && f != "" {
		sep := env["COMPOSE_PATH_SEPARATOR"]
		if sep == "" {
			sep = string(os.PathListSeparator)
		}
		return o.absPaths(strings.Split(f, sep)), nil
	}
	dir, err := filepath.Abs(o.WorkingDir)
	if err != nil {
		return nil, err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if f := firstExisting(d, cli.DefaultFileNames); f != "" {
			found := []string{f}
			if ov := firstExisting(d, cli.DefaultOverrideFileNames); ov != "" {
				found = append(found, ov)
			}
			return found, nil
		}
		if filepath.Dir(d) == d {
			return nil, fmt.Errorf("no Compose file (compose.yaml, docker-compose.yml, ...) found in %s or its parents: create one or pass -f FILE", dir)
		}
	}
}

func firstExisting(dir string, names []string) string {
	for _, n := range names {
		f := filepath.Join(dir, n)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			return f
		}
	}
	return ""
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func (o Options) absPaths(files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if f != "-" && !filepath.IsAbs(f) && o.WorkingDir != "" {
			f = filepath.Join(o.WorkingDir, f)
		}
		out = append(out, f)
	}
	return out
}
