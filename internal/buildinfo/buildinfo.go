// Package buildinfo reports the version cornus was built as.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// version is set at link time: -X github.com/cornus-dev/cornus/internal/buildinfo.version=v0.1.0
var version = ""

// Version returns the release version, or the VCS revision for dev builds.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "dev"
}

// Platform is GOOS/GOARCH.
func Platform() string { return runtime.GOOS + "/" + runtime.GOARCH }
