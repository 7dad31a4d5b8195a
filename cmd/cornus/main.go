// Command cornus is a Compose-native deploy engine and Docker CLI plugin.
package main

import (
	"os"

	"github.com/cornus-dev/cornus/plugin"
)

func main() {
	s := streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Environ: os.Environ()}
	if plugin.IsPluginBinary(os.Args[0]) {
		os.Exit(runPlugin(os.Args[1:], s))
	}
	os.Exit(run(os.Args[1:], s))
}
