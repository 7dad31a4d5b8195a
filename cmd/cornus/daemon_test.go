package main

import (
	"strings"
	"testing"
)

// `cornus daemon docker --listen` refuses a TCP address off loopback with
// the reason, before it opens a backend (the backend named here does not
// exist, so reaching it would be a different error) or starts anything.
func TestDaemonDockerRefusesNonLoopbackListen(t *testing.T) {
	env := []string{"CORNUS_DEPLOY_BACKEND=no-such-backend", "CORNUS_STATE_DIR=" + t.TempDir()}
	for _, addr := range []string{"tcp://0.0.0.0:0", "tcp://:0", "tcp://[::]:0"} {
		out, errOut, code := runCLI(t, t.TempDir(), env, "daemon", "docker", "--listen", addr)
		if code == 0 || !strings.Contains(errOut, "no authentication, so cornus only serves it on loopback (tcp://127.0.0.1:PORT) or a unix socket") {
			t.Errorf("daemon docker --listen %s: exit %d, stdout %q, stderr %q", addr, code, out, errOut)
		}
	}
}
