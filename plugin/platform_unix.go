//go:build !windows

package plugin

import "runtime"

const (
	// fileName is the plugin's file in a cli-plugins directory.
	fileName = BinaryName
	// homeVar names the home directory ~/.docker is in.
	homeVar = "HOME"
	// mustCopy: a symlink serves.
	mustCopy = false
)

// systemDirs are where the docker CLI looks for plugins besides
// <config dir>/cli-plugins (docker/cli cli-plugins/manager), with
// Homebrew's on macOS.
func systemDirs() []string {
	dirs := []string{
		"/usr/local/lib/docker/cli-plugins",
		"/usr/local/libexec/docker/cli-plugins",
		"/usr/lib/docker/cli-plugins",
		"/usr/libexec/docker/cli-plugins",
	}
	if runtime.GOOS == "darwin" {
		dirs = append(dirs, "/opt/homebrew/lib/docker/cli-plugins", "/opt/homebrew/libexec/docker/cli-plugins")
	}
	return dirs
}
