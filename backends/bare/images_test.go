package bare

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// Locks down a flake of the bare lane: an image removal's collection
// deleted the blobs a load beside it had written but not yet named, and
// the load failed. Two loops load and remove two images at once; every
// load must succeed.
func TestLoadBesideRemove(t *testing.T) {
	b := newTestBackend(t)
	ctx := context.Background()
	const rounds = 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for _, name := range []string{"a", "b"} {
		var tar bytes.Buffer
		ref := "cornus-test/load-remove:" + name
		if err := testimage.BuildBusybox(&tar, testimage.Options{Ref: ref, Files: map[string]string{"/" + name: name}}); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range rounds {
				if _, err := b.LoadImage(ctx, bytes.NewReader(tar.Bytes())); err != nil {
					errs <- fmt.Errorf("load %s, round %d: %w", ref, i, err)
					continue
				}
				if _, err := b.InspectImage(ctx, ref); err != nil {
					errs <- fmt.Errorf("inspect %s after its load, round %d: %w", ref, i, err)
				}
				if err := b.RemoveImage(ctx, ref, false); err != nil {
					errs <- fmt.Errorf("remove %s, round %d: %w", ref, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 3 {
		t.Errorf("... %d failures in all", n)
	}
}
