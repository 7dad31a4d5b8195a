package backends

import (
	"reflect"
	"testing"
)

// TestDockerOptsRoundTrip: Docker's form of a Security parses back to it,
// so dockerhost sends dockerd what the spec said.
func TestDockerOptsRoundTrip(t *testing.T) {
	for _, s := range []Security{
		{},
		{NoNewPrivileges: true, Seccomp: "unconfined", AppArmor: "p", SELinux: []string{"disable", "type:t"},
			Mask: []string{"/a", "/b"}, Unmask: []string{"ALL"}, WritableCgroups: true},
	} {
		back, err := parseSecurity("securityOpt", s.DockerOpts())
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("%+v: DockerOpts %q parse back to %+v (%v)", s, s.DockerOpts(), back, err)
		}
	}
}
