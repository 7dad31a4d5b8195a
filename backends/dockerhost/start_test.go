package dockerhost

import "testing"

// TestStaleTaskAnswer: dockerd's answer for a task containerd kept across
// a crash is recognised (it becomes backends.ErrStaleTask), other start
// failures are not.
func TestStaleTaskAnswer(t *testing.T) {
	for msg, want := range map[string]bool{
		"Error response from daemon: task 1619b0a149e901d64fc3e8a64b0c4707018dcbb19f7f288f41ddb9b8a1ca2922: already exists":                                           true,
		"Error response from daemon: failed to start shim: mkdir /tmp/c/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/98fd11955c2c: file exists: unknown": true,
		"Error response from daemon: Conflict. The container name \"/x\" is already in use":                                                                           false,
		"Error response from daemon: driver failed programming external connectivity: bind: address already in use":                                                   false,
	} {
		if got := staleTask.MatchString(msg); got != want {
			t.Errorf("%q: stale task = %v, want %v", msg, got, want)
		}
	}
}
