package podman

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Stream ids of podman's multiplexed output (the Docker framing: an 8-byte
// header — stream, three zero bytes, a big-endian uint32 length — then
// that many bytes).
const (
	streamStdin  = 0
	streamStdout = 1
	streamStderr = 2
	streamSystem = 3 // an error podman reports in band
)

// maxSystemFrame bounds the in-band error message kept from a stream.
const maxSystemFrame = 64 << 10

// demux copies a multiplexed stream to stdout and stderr until EOF. Frames
// are copied through, never buffered whole, so a frame's size does not
// matter. An in-band system error ends the copy with that error.
func demux(stdout, stderr io.Writer, r io.Reader) error {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("truncated stream frame header: %w", err)
			}
			return err
		}
		size := int64(binary.BigEndian.Uint32(hdr[4:]))
		var w io.Writer
		switch hdr[0] {
		case streamStdin, streamStdout:
			w = stdout
		case streamStderr:
			w = stderr
		case streamSystem:
			var msg strings.Builder
			if _, err := io.CopyN(&msg, io.LimitReader(r, maxSystemFrame), min(size, maxSystemFrame)); err != nil {
				return err
			}
			return fmt.Errorf("podman: %s", strings.TrimSpace(msg.String()))
		default:
			return fmt.Errorf("unknown stream %d in multiplexed output", hdr[0])
		}
		if _, err := io.CopyN(w, r, size); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("truncated stream frame: %w", io.ErrUnexpectedEOF)
			}
			return err
		}
	}
}

// copyOutput copies a raw (TTY) or multiplexed stream.
func copyOutput(stdout, stderr io.Writer, r io.Reader, tty bool) error {
	if tty {
		_, err := io.Copy(stdout, r)
		return err
	}
	return demux(stdout, stderr, r)
}

// outputs fills in missing writers: no stdout discards, no stderr merges
// into stdout.
func outputs(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = stdout
	}
	return stdout, stderr
}
