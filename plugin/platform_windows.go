package plugin

import (
	"os"
	"path/filepath"
)

const (
	// fileName is the plugin's file in a cli-plugins directory: the docker
	// CLI looks for docker-NAME.exe on Windows.
	fileName = BinaryName + ".exe"
	// homeVar names the home directory .docker is in (the docker CLI's
	// home on Windows).
	homeVar = "USERPROFILE"
	// mustCopy: making a symlink takes Developer Mode or an administrator
	// on Windows, so the plugin is always a copy.
	mustCopy = true
)

// systemDirs are where the docker CLI (and Docker Desktop's plugins) live
// besides %USERPROFILE%\.docker\cli-plugins.
func systemDirs() []string {
	return []string{
		filepath.Join(os.Getenv("ProgramData"), "Docker", "cli-plugins"),
		filepath.Join(os.Getenv("ProgramFiles"), "Docker", "cli-plugins"),
	}
}
