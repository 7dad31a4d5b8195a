package dockerhost

import "testing"

// Locks down the socket choice: DOCKER_HOST, else CORNUS_DOCKER_SOCK (path
// or URL), else the default socket.
func TestHostFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, DefaultHost},
		{[]string{"CORNUS_DOCKER_SOCK=/run/d.sock"}, "unix:///run/d.sock"},
		{[]string{"CORNUS_DOCKER_SOCK=unix:///x.sock"}, "unix:///x.sock"},
		{[]string{"CORNUS_DOCKER_SOCK=/run/d.sock", "DOCKER_HOST=tcp://127.0.0.1:2375"}, "tcp://127.0.0.1:2375"},
		{[]string{"DOCKER_HOST="}, DefaultHost},
	} {
		if got := HostFromEnv(tc.env); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
}
