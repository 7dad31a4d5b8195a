// Package headwriter keeps the head of a stream: what a command printed
// first (its error output, for a message), an archive entry's first bytes.
package headwriter

import "io"

// Writer passes the first N bytes written to W and drops the rest,
// reporting them written all the same: a command writing more must
// neither fail nor block on a full pipe.
type Writer struct {
	W io.Writer
	N int
}

func (h *Writer) Write(p []byte) (int, error) {
	if keep := min(len(p), h.N); keep > 0 {
		if _, err := h.W.Write(p[:keep]); err != nil {
			return 0, err
		}
		h.N -= keep
	}
	return len(p), nil
}
