package plugin

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// listen opens a unix listener like the docker CLI's plugin server: an
// abstract "@docker_cli_<random>" address on Linux, or a path.
func listen(t *testing.T, abstract bool) *net.UnixListener {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	addr := "@cornus_test_" + hex.EncodeToString(b)
	if !abstract {
		addr = filepath.Join(t.TempDir(), "cli.sock")
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		t.Skipf("unix listener %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// Locks down the Ctrl-C forwarding of docker CLI v24+: the plugin connects
// to DOCKER_CLI_PLUGIN_SOCKET and is cancelled when the CLI closes it.
func TestWatchCLICancelsWhenTheCLICloses(t *testing.T) {
	for _, abstract := range []bool{true, false} {
		l := listen(t, abstract)
		cancelled := make(chan struct{})
		stop, err := WatchCLI([]string{EnvSocket + "=" + l.Addr().String()}, func() { close(cancelled) })
		if err != nil {
			t.Fatal(err)
		}
		_ = l.SetDeadline(time.Now().Add(5 * time.Second))
		conn, err := l.Accept()
		if err != nil {
			t.Fatalf("the plugin did not connect to %s: %v", l.Addr(), err)
		}
		// Bytes from the CLI are not a cancellation.
		_, _ = conn.Write([]byte("x"))
		select {
		case <-cancelled:
			t.Fatal("cancelled before the CLI closed the socket")
		case <-time.After(100 * time.Millisecond):
		}
		_ = conn.Close() // what the CLI does on SIGINT/SIGTERM
		select {
		case <-cancelled:
		case <-time.After(5 * time.Second):
			t.Fatalf("not cancelled after the CLI closed %s", l.Addr())
		}
		stop()
	}
}

// Locks down that the plugin closing its own end (normal exit) is no
// cancellation, and that a missing socket variable connects nothing.
func TestWatchCLIStop(t *testing.T) {
	l := listen(t, true)
	called := make(chan struct{}, 1)
	stop, err := WatchCLI([]string{EnvSocket + "=" + l.Addr().String()}, func() { called <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	conn, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stop()
	select {
	case <-called:
		t.Fatal("stop cancelled the command")
	case <-time.After(100 * time.Millisecond):
	}

	stop, err = WatchCLI([]string{"PATH=/bin"}, func() { t.Error("cancel without a socket") })
	if err != nil {
		t.Fatal(err)
	}
	stop()

	dead := filepath.Join(t.TempDir(), "gone.sock")
	stop, err = WatchCLI([]string{EnvSocket + "=" + dead}, func() { t.Error("cancel on a failed connect") })
	if err == nil {
		t.Error("connecting to a missing socket succeeded")
	}
	stop()
}
