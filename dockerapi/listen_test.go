package dockerapi

import (
	"net"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// The Engine API has no authentication: TCP is served on loopback only,
// and anything else is refused before a socket is opened, saying why
// (docs/security.md: "serves TCP on loopback only").
func TestListenRefusesNonLoopbackTCP(t *testing.T) {
	for _, addr := range []string{
		"tcp://0.0.0.0:0", "tcp://:0", "tcp://[::]:0", "tcp://192.0.2.10:0", "tcp://example.com:0", "tcp://127.0.0.1.nip.io:0",
	} {
		l, err := Listen(addr)
		if err == nil {
			l.Close()
			t.Errorf("Listen(%q) served on %s, want a refusal", addr, l.Addr())
			continue
		}
		if !errdefs.IsPermissionDenied(err) || !strings.Contains(err.Error(), "no authentication") || !strings.Contains(err.Error(), "tcp://127.0.0.1:PORT") {
			t.Errorf("Listen(%q): %v, want the loopback-only refusal", addr, err)
		}
		if cerr := CheckListen(addr); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("CheckListen(%q) = %v, want %v", addr, cerr, err)
		}
	}
	for _, addr := range []string{"tcp://127.0.0.1:0", "tcp://127.0.0.2:0", "tcp://localhost:0"} {
		l, err := Listen(addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		if ta := l.Addr().(*net.TCPAddr); !ta.IP.IsLoopback() {
			t.Errorf("Listen(%q) bound %s", addr, ta)
		}
		l.Close()
	}
	for _, addr := range []string{"http://127.0.0.1:2375", "tcp://127.0.0.1", "unix://"} {
		if err := CheckListen(addr); !errdefs.IsInvalidArgument(err) {
			t.Errorf("CheckListen(%q) = %v, want an invalid argument", addr, err)
		}
	}
}
