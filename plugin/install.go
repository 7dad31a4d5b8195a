package plugin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/containerd/errdefs"
)

// DefaultDir is the user's docker CLI plugin directory:
// $DOCKER_CONFIG/cli-plugins, else $HOME/.docker/cli-plugins.
func DefaultDir(environ []string) (string, error) {
	d, err := dockerConfigDir("", environ)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "cli-plugins"), nil
}

// InstallOptions say where to install the plugin and how.
type InstallOptions struct {
	Dir        string   // "" means DefaultDir(Environ)
	Environ    []string // KEY=VALUE, for DefaultDir
	Executable string   // the cornus binary; "" means os.Executable
	Copy       bool     // copy the binary instead of symlinking it
}

// InstallResult says what Install did.
type InstallResult struct {
	Path       string // <dir>/docker-cornus
	Executable string // the binary it links to or was copied from (symlinks resolved)
	Copied     bool
	Unchanged  bool // Path already is Executable (the installed copy ran Install)
	Found      bool // the docker CLI searches Dir (the default or a system directory)
}

// Install makes the running cornus binary the docker CLI plugin
// <dir>/docker-cornus: a symlink to the resolved executable, or a copy of
// it, replacing what was there atomically (a directory there is an error).
func Install(o InstallOptions) (InstallResult, error) {
	dir, def, err := pluginDir(o.Dir, o.Environ)
	if err != nil {
		return InstallResult{}, err
	}
	exe := o.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return InstallResult{}, fmt.Errorf("find the cornus executable: %w", err)
		}
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return InstallResult{}, fmt.Errorf("resolve the cornus executable: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return InstallResult{}, fmt.Errorf("resolve the cornus executable: %w", err)
	}
	path := filepath.Join(dir, fileName)
	res := InstallResult{Path: path, Executable: exe, Found: dir == def || slices.Contains(systemDirs(), dir)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return InstallResult{}, fmt.Errorf("create plugin directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			return InstallResult{}, fmt.Errorf("install docker CLI plugin: %s is a directory: %w", path, errdefs.ErrConflict)
		}
		if fi.Mode().IsRegular() {
			if ei, err := os.Stat(exe); err == nil && os.SameFile(fi, ei) {
				// The plugin file is this binary: linking or copying it
				// onto itself would destroy it.
				res.Unchanged = true
				return res, nil
			}
		}
	}
	tmp, err := tempName(dir)
	if err != nil {
		return InstallResult{}, err
	}
	if o.Copy || mustCopy {
		res.Copied = true
		err = copyFile(exe, tmp)
	} else {
		err = os.Symlink(exe, tmp)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return InstallResult{}, fmt.Errorf("install docker CLI plugin %s: %w", path, err)
	}
	return res, nil
}

// UninstallOptions say where the plugin is.
type UninstallOptions struct {
	Dir     string   // "" means DefaultDir(Environ)
	Environ []string // KEY=VALUE, for DefaultDir
}

// UninstallResult says what Uninstall did.
type UninstallResult struct {
	Path    string // <dir>/docker-cornus
	Removed bool   // false when nothing was installed there
}

// Uninstall removes <dir>/docker-cornus; a missing plugin is not an error.
func Uninstall(o UninstallOptions) (UninstallResult, error) {
	dir, _, err := pluginDir(o.Dir, o.Environ)
	if err != nil {
		return UninstallResult{}, err
	}
	path := filepath.Join(dir, fileName)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return UninstallResult{Path: path}, nil
	}
	if err != nil {
		return UninstallResult{}, fmt.Errorf("uninstall docker CLI plugin: %w", err)
	}
	if fi.IsDir() {
		return UninstallResult{}, fmt.Errorf("uninstall docker CLI plugin: %s is a directory: %w", path, errdefs.ErrConflict)
	}
	if err := os.Remove(path); err != nil {
		return UninstallResult{}, fmt.Errorf("uninstall docker CLI plugin: %w", err)
	}
	return UninstallResult{Path: path, Removed: true}, nil
}

// pluginDir returns the absolute target dir and the default dir.
func pluginDir(dir string, environ []string) (string, string, error) {
	def, defErr := DefaultDir(environ)
	if dir == "" {
		if defErr != nil {
			return "", "", defErr
		}
		dir = def
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("plugin directory %s: %w", dir, err)
	}
	if defErr == nil {
		if d, err := filepath.Abs(def); err == nil {
			def = d
		}
	}
	return abs, def, nil
}

// tempName is an unused name in dir to build the plugin under before the
// rename.
func tempName(dir string) (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("temporary plugin name: %w", err)
	}
	return filepath.Join(dir, "."+BinaryName+".tmp-"+hex.EncodeToString(b)), nil
}

// copyFile copies the executable src to the new file dst, mode 0755.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
