// Package testnet holds network helpers for tests that talk to what they
// deployed: only ever 127.0.0.1.
package testnet

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// FreePort returns a TCP port free on 127.0.0.1 right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// HTTPGet fetches / from addr with a bare HTTP/1.0 request and returns the
// whole response (status line and headers included).
func HTTPGet(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.0\r\nHost: x\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, io.EOF) {
		return string(b), err
	}
	return string(b), nil
}

// SendUDP sends one datagram to addr (a 127.0.0.1 address).
func SendUDP(addr, payload string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = io.WriteString(c, payload)
	return err
}
