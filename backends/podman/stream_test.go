package podman

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func frame(stream byte, payload string) []byte {
	h := make([]byte, 8, 8+len(payload))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(payload)))
	return append(h, payload...)
}

// Locks down the multiplexed stream reader: streams split, an in-band
// system error ends the copy with its text, a cut frame is an error.
func TestDemux(t *testing.T) {
	var in bytes.Buffer
	in.Write(frame(1, "out1\n"))
	in.Write(frame(2, "err1\n"))
	in.Write(frame(1, "out2\n"))
	var out, errb bytes.Buffer
	if err := demux(&out, &errb, &in); err != nil || out.String() != "out1\nout2\n" || errb.String() != "err1\n" {
		t.Fatalf("demux: %v %q %q", err, out.String(), errb.String())
	}
	err := demux(io.Discard, io.Discard, bytes.NewReader(frame(3, "container gone\n")))
	if err == nil || !strings.Contains(err.Error(), "container gone") {
		t.Fatalf("system frame: %v", err)
	}
	cut := frame(1, "abcdef")[:10]
	if err := demux(io.Discard, io.Discard, bytes.NewReader(cut)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame: %v", err)
	}
	if err := demux(io.Discard, io.Discard, bytes.NewReader([]byte{1, 0, 0})); err == nil {
		t.Fatal("cut header: no error")
	}
}
