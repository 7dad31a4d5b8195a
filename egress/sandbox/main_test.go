package sandbox

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestMain serves as the child when the sandbox under test starts this
// binary with Subcommand.
func TestMain(m *testing.M) {
	if IsChild(os.Args) {
		if err := Main(context.Background(), os.Environ()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
