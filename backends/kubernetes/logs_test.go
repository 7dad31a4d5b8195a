package kubernetes

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Locks down a flake of the kubernetes lane (a restarting container's
// logs reading "unable to retrieve container logs for containerd://…"):
// the kubelet's notice, as the whole answer, is no output but errRunGone
// (Logs then asks again); output that merely starts like it passes.
func TestScreenNotice(t *testing.T) {
	notice := "unable to retrieve container logs for containerd://0b3c1f9e2d"
	for _, c := range []struct {
		name, body string
		gone       bool
	}{
		{"notice", notice, true},
		{"empty", "", false},
		{"output", "hello\nworld\n", false},
		{"a line like it", notice + "\nmore\n", false},
		{"the prefix only", "unable to retrieve", false},
	} {
		for _, chunked := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.body)
			if chunked {
				r = iotest.OneByteReader(r)
			}
			got, err := screenNotice(r)
			if c.gone {
				if !errors.Is(err, errRunGone) {
					t.Errorf("%s (chunked %v): %v, want errRunGone", c.name, chunked, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (chunked %v): %v", c.name, chunked, err)
				continue
			}
			if out, _ := io.ReadAll(got); string(out) != c.body {
				t.Errorf("%s (chunked %v): output %q, want %q", c.name, chunked, out, c.body)
			}
		}
	}
}
