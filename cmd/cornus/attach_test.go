package main

import (
	"io"
	"strings"
	"testing"
)

// The detach keys end stdin where they are typed in a row, and are not
// sent; a partial match is sent as typed.
func TestDetachReader(t *testing.T) {
	keys, err := parseDetachKeys("ctrl-p,ctrl-q")
	if err != nil || string(keys) != "\x10\x11" {
		t.Fatalf("ctrl-p,ctrl-q: %q %v", keys, err)
	}
	if _, err := parseDetachKeys("ctrl-"); err == nil {
		t.Fatal("ctrl- alone was taken for a key")
	}
	detached := false
	r := &detachReader{r: strings.NewReader("a\x10b\x10\x11c"), keys: keys, detach: func() { detached = true }}
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "a\x10b" || !detached {
		t.Fatalf("read %q %v, detached %t; want a, ctrl-p, b and a detach", got, err, detached)
	}
}
