package dockerhost

import "testing"

// Issue 12: the backend reads its own remote-mode variable from the
// environ it was given; only "1" turns it on, the last one winning.
func TestRemoteMode(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"CORNUS_DOCKER_REMOTE=1"}, true},
		{[]string{"CORNUS_DOCKER_REMOTE=1", "CORNUS_DOCKER_REMOTE=0"}, false},
		{[]string{"CORNUS_DOCKER_REMOTE=true"}, false},
		{[]string{"CORNUS_CONTAINERD_REMOTE=1", "CORNUS_K8S_REMOTE=1"}, false},
	} {
		b := &Backend{remote: remoteOn(tc.env)}
		if on, v := b.RemoteMode(); on != tc.want || v != "CORNUS_DOCKER_REMOTE" {
			t.Errorf("%v: %v %s, want %v CORNUS_DOCKER_REMOTE", tc.env, on, v, tc.want)
		}
		if err := b.CheckLocalMounts(t.Context()); (err == nil) == tc.want {
			t.Errorf("%v: local mounts as host binds: %v", tc.env, err)
		}
	}
}
