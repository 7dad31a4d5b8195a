package compose

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// configDetails reads what compose-go's loader needs for files: the
// project directory, the environment (with env files) and the files'
// contents. cornus reads them itself, bounded, instead of letting
// compose-go's cli layer read them whole (`-f /dev/zero` would never end).
func (o Options) configDetails(files []string) (types.ConfigDetails, error) {
	dir, err := o.projectDir(files)
	if err != nil {
		return types.ConfigDetails{}, err
	}
	env, err := o.environment(dir)
	if err != nil {
		return types.ConfigDetails{}, err
	}
	cfs := make([]types.ConfigFile, len(files))
	for i, f := range files {
		var b []byte
		if f == "-" {
			in := o.Stdin
			if in == nil {
				in = os.Stdin
			}
			b, err = boundedfile.ReadFrom(in, "standard input (-f -)", boundedfile.ComposeFile)
		} else {
			if f, err = filepath.Abs(f); err != nil {
				return types.ConfigDetails{}, err
			}
			b, err = boundedfile.Read(f, boundedfile.ComposeFile)
		}
		if err != nil {
			return types.ConfigDetails{}, composeFileError(f, err)
		}
		cfs[i] = types.ConfigFile{Filename: f, Content: b}
	}
	return types.ConfigDetails{WorkingDir: dir, ConfigFiles: cfs, Environment: env}, nil
}

// projectDir is --project-directory, else the first file's directory
// (stdin has none), else WorkingDir.
func (o Options) projectDir(files []string) (string, error) {
	if o.ProjectDir != "" {
		return filepath.Abs(o.absPaths([]string{o.ProjectDir})[0])
	}
	for _, f := range files {
		if f != "-" {
			abs, err := filepath.Abs(f)
			return filepath.Dir(abs), err
		}
	}
	if o.WorkingDir != "" {
		return filepath.Abs(o.WorkingDir)
	}
	return os.Getwd()
}

// environment is Environ plus the env files — --env-file, else the .env in
// dir — read bounded, as docker compose does: a variable already in
// Environ wins, and an env file may use variables set before it.
func (o Options) environment(dir string) (types.Mapping, error) {
	env := types.Mapping(envMap(o.Environ))
	files := o.absPaths(o.EnvFiles)
	if len(files) == 0 {
		off, err := disabledDotEnv(env)
		if err != nil {
			return nil, err
		}
		// The default .env is a convenience: one that cannot be stat'ed
		// (missing, or no permission) is skipped.
		f := filepath.Join(dir, ".env")
		if fi, err := os.Stat(f); !off && err == nil && !fi.IsDir() {
			files = []string{f}
		}
	}
	fromFiles := map[string]string{}
	lookup := func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		v, ok := fromFiles[k]
		return v, ok
	}
	for _, f := range files {
		f, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		b, err := boundedfile.Read(f, boundedfile.EnvFile)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("couldn't find env file: %s", f)
		}
		if err != nil {
			return nil, err
		}
		if err := dotenv.ParseWithFormat(bytes.NewReader(b), f, fromFiles, lookup, ""); err != nil {
			return nil, err
		}
	}
	return env.Merge(fromFiles), nil
}

// disabledDotEnv reads COMPOSE_DISABLE_ENV_FILE (from Environ, not the
// process: loading never reads os.Environ behind the caller's back).
func disabledDotEnv(env types.Mapping) (bool, error) {
	v, ok := env["COMPOSE_DISABLE_ENV_FILE"]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("COMPOSE_DISABLE_ENV_FILE=%q: %w", v, err)
	}
	return b, nil
}

// composeFileError words a failure to read Compose file f as compose-go
// does; a refusal already names the file and says what to do.
func composeFileError(f string, err error) error {
	if errors.Is(err, boundedfile.ErrNotRegular) || errors.Is(err, boundedfile.ErrTooLarge) {
		return err
	}
	return fmt.Errorf("compose file %q is invalid: %w", f, err)
}

// detailsError is loadError for configDetails: a refusal names its file
// (an env file, stdin) and must not be prefixed with the Compose files.
func (lc loadContext) detailsError(err error) error {
	if isRefusal(err) {
		return err
	}
	return lc.loadError(err)
}

// readCompose reads a Compose file with the size limit, for the code that
// re-reads one to explain an error.
func readCompose(f string) ([]byte, error) { return boundedfile.Read(f, boundedfile.ComposeFile) }
