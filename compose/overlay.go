package compose

import (
	"context"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// Overlay is a Compose file another front end made in memory (the
// devcontainer package's service for a devcontainer.json), loaded on top of
// Files as docker compose loads an override file.
type Overlay struct {
	// File is the generated model; its Filename is the source file errors
	// name. A zero File loads Files alone.
	File types.ConfigFile
	// Files are the Compose files under it, in order; may be empty.
	Files []string
	// WorkingDir is the project directory when Files is empty.
	WorkingDir string
	// DefaultName is the project name unless -p or COMPOSE_PROJECT_NAME
	// set one.
	DefaultName string
}

// LoadOverlay loads ov with o's environment, env files, profiles and
// project name, as Load loads Compose files, and returns the project before
// cornus's extensions are typed (TypedExtensions does that), so that a
// caller can load Files alone to explain an error of the overlay.
func LoadOverlay(ctx context.Context, o Options, ov Overlay) (_ *types.Project, err error) {
	defer recoverLoad(&err)
	env := types.Mapping(envMap(o.Environ))
	details := types.ConfigDetails{WorkingDir: ov.WorkingDir, Environment: env}
	lc := loadContext{files: []string{ov.File.Filename}, nameSource: o.nameSource()}
	if len(ov.Files) > 0 {
		lc.files = ov.Files
		base := Options{Environ: o.Environ, EnvFiles: o.EnvFiles, ProjectDir: o.ProjectDir, WorkingDir: o.WorkingDir, Stdin: o.Stdin}
		cd, err := base.configDetails(ov.Files)
		if err != nil {
			return nil, lc.detailsError(err)
		}
		details = cd
	}
	if ov.File.Filename != "" {
		details.ConfigFiles = append(details.ConfigFiles, ov.File)
	}
	profiles := o.Profiles
	if len(profiles) == 0 && env["COMPOSE_PROFILES"] != "" {
		profiles = strings.Split(env["COMPOSE_PROFILES"], ",")
	}
	p, err := loadChecked(ctx, details, loader.WithProfiles(profiles), func(lo *loader.Options) {
		switch {
		case o.ProjectName != "":
			lo.SetProjectName(o.ProjectName, true)
		case env["COMPOSE_PROJECT_NAME"] != "":
			lo.SetProjectName(env["COMPOSE_PROJECT_NAME"], true)
		default:
			lo.SetProjectName(ov.DefaultName, false)
		}
	})
	if err != nil {
		return nil, lc.loadError(err)
	}
	return p, nil
}

// TypedExtensions parses and validates cornus's x-cornus-* extensions of p
// into typed values, as Load does.
func TypedExtensions(p *types.Project) (*types.Project, error) {
	return withTypedExtensions(p)
}
