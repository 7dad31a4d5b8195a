package api

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// TestChunks: a chunked payload reads back whole; one its sender broke
// off (no end chunk, or cut inside a chunk) is an error, never a shorter
// payload; a budget shared by readers ends what exceeds it.
func TestChunks(t *testing.T) {
	payload := strings.Repeat("0123456789", 20000) // several chunks
	var buf bytes.Buffer
	w := ChunkWriter{W: &buf}
	if _, err := w.Write([]byte(payload)); err != nil {
		t.Fatal(err)
	}
	whole := append(slices.Clone(buf.Bytes()), 0, 0, 0, 0)
	got, err := io.ReadAll(&ChunkReader{R: bytes.NewReader(whole)})
	if err != nil || string(got) != payload {
		t.Fatalf("whole payload: %d bytes, %v", len(got), err)
	}
	for name, cut := range map[string][]byte{"no end chunk": buf.Bytes(), "cut in a chunk": buf.Bytes()[:buf.Len()-7], "cut in a header": whole[:len(whole)-2]} {
		if _, err := io.ReadAll(&ChunkReader{R: bytes.NewReader(cut)}); !errors.Is(err, ErrBrokenOff) {
			t.Errorf("%s: %v, want ErrBrokenOff", name, err)
		}
	}
	budget := NewBudget("files", int64(len(payload))+10)
	if _, err := io.ReadAll(&ChunkReader{R: bytes.NewReader(whole), Limit: budget}); err != nil {
		t.Fatalf("within the budget: %v", err)
	}
	if _, err := io.ReadAll(&ChunkReader{R: bytes.NewReader(whole), Limit: budget}); !errdefs.IsResourceExhausted(err) {
		t.Fatalf("past the budget: %v", err)
	}
	if _, err := io.ReadAll(&ChunkReader{R: bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff})}); err == nil {
		t.Fatal("an oversized chunk was taken")
	}
}
