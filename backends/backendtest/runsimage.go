package backendtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// RunsImage checks b runs image as it is (no load, no pull): a container
// of it starts and execs; it is removed when the test ends.
func RunsImage(ctx context.Context, t *testing.T, b backends.Backend, image string) {
	t.Helper()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "cornus-t-runs-" + hex.EncodeToString(suffix)
	cs, err := backends.Resolve(backends.ResolveInput{Project: name, Replica: 1, Name: name,
		App: spec.App{Name: "app", Image: image, Command: spec.Command{"sleep", "600"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Remove(context.Background(), name, backends.RemoveOptions{Force: true, Volumes: true}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	c, err := b.Create(ctx, cs)
	if err != nil {
		t.Fatalf("create from %s: %v", image, err)
	}
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatalf("start %s: %v", image, err)
	}
	var out bytes.Buffer
	if code, err := b.Exec(ctx, c.ID, backends.ExecOptions{Cmd: []string{"echo", "ran"}, Stdout: &out}); err != nil || code != 0 || strings.TrimSpace(out.String()) != "ran" {
		t.Fatalf("exec in %s: %d %v %q", image, code, err, out.String())
	}
}
