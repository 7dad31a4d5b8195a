// Command cornus is a Compose-native deploy engine and Docker CLI plugin.
package main

import (
	"os"
	"runtime"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/plugin"
)

func main() {
	s := streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Environ: os.Environ()}
	if runtime.GOOS == "linux" { // where the devcontainer CLI updates the remote user's UID too
		s.User = &compose.LocalUser{UID: os.Getuid(), GID: os.Getgid()}
	}
	if plugin.IsPluginBinary(os.Args[0]) {
		os.Exit(runPlugin(os.Args[1:], s))
	}
	os.Exit(run(os.Args[1:], s))
}
