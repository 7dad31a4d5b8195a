package containerd

import (
	"bytes"
	"crypto/rand"
	"io"
	"testing"
)

// memReaderAt is a content.ReaderAt over bytes that counts its reads.
type memReaderAt struct {
	*bytes.Reader
	reads int
}

func (m *memReaderAt) ReadAt(p []byte, off int64) (int, error) {
	m.reads++
	return m.Reader.ReadAt(p, off)
}
func (m *memReaderAt) Close() error { return nil }

// The fallback reader of a pull (no direct file): every byte in order
// and after a seek, in large chunks (not one round trip per copy buffer).
func TestChunkedReader(t *testing.T) {
	data := make([]byte, 3*readChunk+12345)
	_, _ = rand.Read(data)
	ra := &memReaderAt{Reader: bytes.NewReader(data)}
	r := &chunkedReader{ra: ra, size: int64(len(data))}
	var got bytes.Buffer
	if _, err := io.CopyBuffer(&got, struct{ io.Reader }{r}, make([]byte, 32<<10)); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read %d bytes (%v), want the blob's %d", got.Len(), err, len(data))
	}
	if ra.reads > 5 {
		t.Errorf("%d reads of the store for %d bytes, want one per MiB", ra.reads, len(data))
	}
	for _, off := range []int64{0, readChunk - 1, 2*readChunk + 7, int64(len(data)) - 3} {
		if _, err := r.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(rest, data[off:]) {
			t.Fatalf("after a seek to %d: %d bytes (%v)", off, len(rest), err)
		}
	}
}
