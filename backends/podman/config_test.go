package podman

import (
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// Locks down endpoint selection exactly as issue 9 says: one of the two
// variables, no default, no probing of DOCKER_HOST or CONTAINER_HOST.
func TestConfigFrom(t *testing.T) {
	cases := []struct {
		name    string
		env     []string
		want    string // endpoint, or "service"
		errIs   func(error) bool
		errHas  []string
		service bool
	}{
		{name: "path", env: []string{EnvSocket + "=/run/p.sock"}, want: "unix:///run/p.sock"},
		{name: "unix URL", env: []string{EnvSocket + "=unix:///run/p.sock"}, want: "unix:///run/p.sock"},
		{name: "tcp", env: []string{EnvSocket + "=tcp://10.0.0.1:8888"}, want: "tcp://10.0.0.1:8888"},
		{name: "service", env: []string{EnvService + "=1"}, service: true},
		{name: "last one wins", env: []string{EnvSocket + "=/a.sock", EnvSocket + "=/b.sock"}, want: "unix:///b.sock"},
		{name: "neither", env: []string{"DOCKER_HOST=unix:///var/run/docker.sock", "CONTAINER_HOST=unix:///run/podman/podman.sock"},
			errIs: errdefs.IsInvalidArgument, errHas: []string{EnvSocket, EnvService}},
		{name: "both", env: []string{EnvSocket + "=/run/p.sock", EnvService + "=1"}, errIs: errdefs.IsInvalidArgument, errHas: []string{EnvSocket, EnvService, "choose one"}},
		{name: "service not 1", env: []string{EnvService + "=yes"}, errIs: errdefs.IsInvalidArgument, errHas: []string{EnvService}},
		{name: "service 0 is unset", env: []string{EnvService + "=0", EnvSocket + "=/p.sock"}, want: "unix:///p.sock"},
		{name: "relative path", env: []string{EnvSocket + "=run/p.sock"}, errIs: errdefs.IsInvalidArgument, errHas: []string{"absolute"}},
		{name: "unix relative", env: []string{EnvSocket + "=unix://run/p.sock"}, errIs: errdefs.IsInvalidArgument},
		{name: "tcp without port", env: []string{EnvSocket + "=tcp://host"}, errIs: errdefs.IsInvalidArgument, errHas: []string{"tcp://host:port"}},
		{name: "ssh", env: []string{EnvSocket + "=ssh://core@box:2222/run/podman/podman.sock"}, errIs: errdefs.IsNotImplemented,
			errHas: []string{"ssh -fNL /run/cornus-podman-remote.sock:/run/podman/podman.sock -p 2222 core@box)"}},
		{name: "unknown scheme", env: []string{EnvSocket + "=http://x"}, errIs: errdefs.IsInvalidArgument, errHas: []string{"unknown scheme"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := configFrom(c.env)
			if c.errIs != nil {
				if !c.errIs(err) {
					t.Fatalf("error %v: wrong class", err)
				}
				for _, s := range c.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.service != c.service {
				t.Fatalf("service = %v", cfg.service)
			}
			if !c.service && cfg.endpoint.String() != c.want {
				t.Fatalf("endpoint %s, want %s", cfg.endpoint, c.want)
			}
		})
	}
}
