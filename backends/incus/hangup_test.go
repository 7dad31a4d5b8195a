package incus

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// hangingUpIncus listens on a unix socket as Incus serves an exec's
// output websocket: it completes the handshake, sends a ping, the output
// and a close, and hangs up at once. hungUp is closed once it has.
func hangingUpIncus(t *testing.T, output string) (socket string, hungUp chan struct{}) {
	t.Helper()
	socket = filepath.Join(t.TempDir(), "incus.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	hungUp = make(chan struct{})
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer close(hungUp)
		defer conn.Close()
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		var b bytes.Buffer
		b.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
		b.WriteString("Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
		frame := func(op byte, payload string) { // unmasked, as a server sends
			b.WriteByte(0x80 | op)
			b.WriteByte(byte(len(payload)))
			b.WriteString(payload)
		}
		frame(0x9, "keepalive") // ping
		frame(0x2, output)      // binary
		frame(0x8, "\x03\xe8")  // close, 1000
		_, _ = conn.Write(b.Bytes())
	}()
	return socket, hungUp
}

// Locks down a flake of the incus lanes (an exec's output empty, a pids
// limit read as ""): a reader that reaches Incus's ping only after Incus
// hung up still reads the output behind it (see hangupConn).
func TestOutputAfterHangup(t *testing.T) {
	socket, hungUp := hangingUpIncus(t, "x\n")
	c := newClient(socket, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, err := c.websocket(ctx, "op", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	select {
	case <-hungUp:
	case <-ctx.Done():
		t.Fatal("the fake Incus did not hang up")
	}
	var out bytes.Buffer
	copyFromWS(ctx, ws, &out)
	if out.String() != "x\n" {
		t.Fatalf("output read after Incus hung up: %q, want %q", out.String(), "x\n")
	}
}
