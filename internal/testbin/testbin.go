// Package testbin builds the cornus binary once for a test process, for
// tests that drive it as a user would (e2e and its drills).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the cornus command found at cmdDir (relative to the test's
// package directory) into a temporary directory and returns the binary and
// a cleanup.
func Build(cmdDir string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "cornus-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	bin := filepath.Join(dir, "cornus")
	build := exec.Command("go", "build", "-o", bin, cmdDir)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build cornus: %v\n%s", err, out)
	}
	return bin, cleanup, nil
}

// Main builds the binary into *bin, runs the tests and exits: a TestMain.
func Main(run func() int, cmdDir string, bin *string) { os.Exit(Run(run, cmdDir, bin)) }

// Run builds the binary into *bin, runs the tests and returns their exit
// code, for a TestMain with more to clean up.
func Run(run func() int, cmdDir string, bin *string) int {
	b, cleanup, err := Build(cmdDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	*bin = b
	return run()
}
