package plugin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

func fakeExe(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "cornus")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho cornus\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// Locks down `cornus plugin install`'s default directory: DOCKER_CONFIG,
// else ~/.docker.
func TestDefaultDir(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/.docker/cli-plugins"},
		{[]string{"HOME=/h", "DOCKER_CONFIG=/cfg"}, "/cfg/cli-plugins"},
	} {
		if got, err := DefaultDir(tc.env); err != nil || got != tc.want {
			t.Errorf("DefaultDir(%q) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
	if _, err := DefaultDir(nil); err == nil {
		t.Error("DefaultDir without HOME or DOCKER_CONFIG succeeded")
	}
}

// Locks down install: a symlink to the resolved executable (or a copy),
// replacing a previous plugin, never destroying the binary itself; and
// uninstall.
func TestInstallUninstall(t *testing.T) {
	exe := fakeExe(t)
	alias := filepath.Join(t.TempDir(), "cornus-alias")
	if err := os.Symlink(exe, alias); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	env := []string{"DOCKER_CONFIG=" + cfg}
	dir := filepath.Join(cfg, "cli-plugins")
	path := filepath.Join(dir, BinaryName)

	// Symlink into the default dir, created on the way; the alias is resolved.
	r, err := Install(InstallOptions{Environ: env, Executable: alias})
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != path || r.Executable != exe || r.Copied || r.Unchanged || !r.Found {
		t.Errorf("result = %+v", r)
	}
	if target, err := os.Readlink(path); err != nil || target != exe {
		t.Errorf("link = %q, %v; want %q", target, err, exe)
	}

	// Installing again replaces the link; with --copy, by a copy.
	r, err = Install(InstallOptions{Environ: env, Executable: exe, Copy: true})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 || !r.Copied {
		t.Fatalf("copy: %v, %v, %+v", fi.Mode(), err, r)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "echo cornus") {
		t.Errorf("copy content = %q", b)
	}

	// The installed copy installing itself must not truncate or loop.
	for _, cp := range []bool{false, true} {
		r, err = Install(InstallOptions{Environ: env, Executable: path, Copy: cp})
		if err != nil || !r.Unchanged {
			t.Errorf("self-install (copy=%v) = %+v, %v", cp, r, err)
		}
		if b, _ := os.ReadFile(path); !strings.Contains(string(b), "echo cornus") {
			t.Errorf("self-install (copy=%v) damaged the plugin: %q", cp, b)
		}
	}

	// Replacing a foreign file with a link.
	if err := os.WriteFile(path, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(InstallOptions{Environ: env, Executable: exe}); err != nil {
		t.Fatal(err)
	}
	if target, _ := os.Readlink(path); target != exe {
		t.Errorf("link after replacing a file = %q", target)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}

	// --dir elsewhere is reported as not searched by docker.
	elsewhere := filepath.Join(t.TempDir(), "plugins")
	if r, err := Install(InstallOptions{Dir: elsewhere, Environ: env, Executable: exe}); err != nil || r.Found || r.Path != filepath.Join(elsewhere, BinaryName) {
		t.Errorf("install --dir: %+v, %v", r, err)
	}

	// Uninstall, twice.
	u, err := Uninstall(UninstallOptions{Environ: env})
	if err != nil || !u.Removed || u.Path != path {
		t.Errorf("uninstall = %+v, %v", u, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plugin still there: %v", err)
	}
	if _, err := os.Stat(exe); err != nil {
		t.Errorf("uninstall removed the executable: %v", err)
	}
	if u, err := Uninstall(UninstallOptions{Environ: env}); err != nil || u.Removed {
		t.Errorf("second uninstall = %+v, %v", u, err)
	}

	// A directory in the way is a conflict, both ways.
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(InstallOptions{Environ: env, Executable: exe}); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("install over a directory: %v", err)
	}
	if _, err := Uninstall(UninstallOptions{Environ: env}); !errors.Is(err, errdefs.ErrConflict) {
		t.Errorf("uninstall a directory: %v", err)
	}
}
