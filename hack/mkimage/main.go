// Command mkimage writes a busybox docker-archive for tests and the demo:
//
//	go run ./hack/mkimage -ref cornus-demo/busybox:1 -o bin/busybox.tar
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cornus-dev/cornus/internal/testimage"
)

func main() {
	ref := flag.String("ref", "cornus-test/busybox:1", "image reference to tag")
	out := flag.String("o", "busybox.tar", "output tar")
	udpsink := flag.Bool("udpsink", false, "add /bin/udpsink (the contract suite's image has it)")
	noEnv := flag.Bool("no-env", false, "leave the image config without Env (no PATH), as docker import does")
	flag.Parse()
	f, err := os.Create(*out)
	if err == nil {
		err = testimage.BuildBusybox(f, testimage.Options{Ref: *ref, UDPSink: *udpsink, NoEnv: *noEnv})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}
