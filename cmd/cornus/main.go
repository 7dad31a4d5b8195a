// Command cornus is a Compose-native deploy engine and Docker CLI plugin.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Environ: os.Environ()}))
}
