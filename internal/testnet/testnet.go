// Package testnet holds network helpers for tests that talk to what they
// deployed: only ever 127.0.0.1.
package testnet

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// FreePort returns a TCP port free on 127.0.0.1 right now, reserved for
// t against the other test processes until t ends. A port a test
// publishes through NAT (CNI's portmap) holds no socket, so the kernel
// would hand it out again to the next bind of port 0: test packages that
// run at once then published the same port twice, and a request reached
// the other test's container; and a test server listening on port 0 got
// a port another lane's container published, its clients' connections
// taken by that DNAT (CI72). So the port is one of 10000-29999, below
// the kernel's ephemeral range, and each port taken is locked in a file
// of reservedDir (a lock, so a killed test's port is free again).
func FreePort(t testing.TB) int {
	t.Helper()
	_ = os.MkdirAll(reservedDir, 0o777) // best effort: see OpenFile below
	for range 100 {
		port := 10000 + rand.IntN(20000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // taken
		}
		l.Close()
		f, err := os.OpenFile(filepath.Join(reservedDir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return port // no reservations here (another user's directory): as before
		}
		if err := lockFile(f); err != nil {
			f.Close() // another test process holds it
			continue
		}
		t.Cleanup(func() { f.Close() })
		return port
	}
	t.Fatal("no free port that no other test holds, in 100 tries")
	return 0
}

// reservedDir holds the lock files of the ports tests hold. The files
// stay: removing one that another process has open would split its lock.
var reservedDir = filepath.Join(os.TempDir(), "cornus-test-ports")

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
