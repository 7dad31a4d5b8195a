package headwriter

import (
	"bytes"
	"testing"
)

// Only the first N bytes reach W; every write reports all of it taken.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := &Writer{W: &b, N: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if b.String() != "abcde" {
		t.Errorf("kept %q, want abcde", b.String())
	}
}
