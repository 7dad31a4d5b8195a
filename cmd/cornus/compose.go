package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/load"
	"github.com/cornus-dev/cornus/translate"
)

// composeFlags are docker compose's global flags.
type composeFlags struct {
	files        []string
	projectName  string
	projectDir   string
	profiles     []string
	envFiles     []string
	devcontainer string
	progress     string
	server       string // a cornus server's URL ("" : $CORNUS_SERVER, else local)
}

func (f *composeFlags) options(s streams) (compose.Options, error) {
	wd, err := s.workingDir()
	if err != nil {
		return compose.Options{}, err
	}
	return compose.Options{
		Files:        f.files,
		ProjectName:  f.projectName,
		ProjectDir:   f.projectDir,
		Profiles:     f.profiles,
		EnvFiles:     f.envFiles,
		Environ:      s.Environ,
		WorkingDir:   wd,
		Devcontainer: f.devcontainer,
		Stdin:        s.In,
		LocalUser:    s.User,
	}, nil
}

// load reads and translates the project, printing warnings to stderr.
func (f *composeFlags) load(ctx context.Context, s streams) (load.Result, error) {
	o, err := f.options(s)
	if err != nil {
		return load.Result{}, err
	}
	return f.loadWith(ctx, s, o)
}

// loadModified is load with modify applied to the loaded project before
// it is translated (run's and up's overrides).
func (f *composeFlags) loadModified(ctx context.Context, s streams, modify func(*types.Project) error) (load.Result, error) {
	o, err := f.options(s)
	if err != nil {
		return load.Result{}, err
	}
	o.Modify = modify
	return f.loadWith(ctx, s, o)
}

// loadWith is load with options of the caller's making (f.options,
// changed).
func (f *composeFlags) loadWith(ctx context.Context, s streams, o compose.Options) (load.Result, error) {
	r, err := load.Compose(ctx, o)
	if err != nil {
		return load.Result{}, err
	}
	if r.Source != "" {
		fmt.Fprintln(s.Err, r.Source)
	}
	printWarnings(s.Err, r.Warnings)
	return r, nil
}

func newComposeCmd(s streams) *cobra.Command {
	f := &composeFlags{}
	cmd := &cobra.Command{
		Use:   "compose",
		Short: "Run Compose projects (and devcontainers) with cornus",
	}
	// Like docker compose, the global flags go before the subcommand
	// (`compose -f a.yaml logs -f`): local flags parsed by TraverseChildren,
	// so subcommands may reuse their shorthands.
	pf := cmd.Flags()
	pf.StringArrayVarP(&f.files, "file", "f", nil, "Compose configuration files")
	pf.StringVarP(&f.projectName, "project-name", "p", "", "Project name")
	pf.StringVar(&f.projectDir, "project-directory", "", "Alternate working directory (default: the first file's directory)")
	pf.StringArrayVar(&f.profiles, "profile", nil, "Profiles to enable")
	pf.StringArrayVar(&f.envFiles, "env-file", nil, "Alternate environment files")
	pf.StringVar(&f.devcontainer, "devcontainer", "", "Load this devcontainer.json instead of Compose files")
	pf.StringVar(&f.devcontainer, "config", "", "Same as --devcontainer (the devcontainer CLI's name for it)")
	pf.StringVar(&f.progress, "progress", "auto", "Progress output: auto, tty, plain, json or quiet")
	pf.StringVar(&f.server, "server", "", "Deploy to a cornus server (URL; default $CORNUS_SERVER) instead of the local backend")
	cmd.AddCommand(
		newConfigCmd(f, s),
		newConvertCmd(f, s),
		newUpCmd(f, s),
		newCreateCmd(f, s),
		newCpCmd(f, s),
		newVolumesCmd(f, s),
		newExportCmd(f, s),
		newCommitCmd(f, s),
		newPullCmd(f, s),
		newPushCmd(f, s),
		newWatchCmd(f, s),
		newBuildCmd(f, s),
		newDownCmd(f, s),
		newPSCmd(f, s),
		newLogsCmd(f, s),
		newExecCmd(f, s),
		newRunCmd(f, s),
		newStartCmd(f, s),
		newStopCmd(f, s),
		newRestartCmd(f, s),
		newKillCmd(f, s),
		newPauseCmd(f, s),
		newUnpauseCmd(f, s),
		newRmCmd(f, s),
		newImagesCmd(f, s),
		newTopCmd(f, s),
		newPortCmd(f, s),
		newLsCmd(f, s),
		newEventsCmd(f, s),
		newWaitCmd(f, s),
		newStatsCmd(f, s),
		newScaleCmd(f, s),
		newAttachCmd(f, s),
		newComposeVersionCmd(s),
	)
	return cmd
}

// composeFieldNames renames a host-policy refusal's spec field paths to the
// Compose attributes the user wrote.
func composeFieldNames(err error) error {
	var d *hostpolicy.DeniedError
	if errors.As(err, &d) {
		return d.Renamed(translate.ComposePath)
	}
	return err
}
