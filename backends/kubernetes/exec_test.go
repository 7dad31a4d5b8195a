package kubernetes

import (
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestWrapExec locks down how an exec's user, environment and working
// directory wrap its command: su takes its options before "--", or its
// getopt would take the command's own "-c" for su's (the devcontainer
// CLI's `exec -u app -w /workspaces/x` ran in the container's directory).
func TestWrapExec(t *testing.T) {
	cmd := []string{"sh", "-c", "pwd"}
	cases := []struct {
		name    string
		o       backends.ExecOptions
		ctrUser string
		want    []string
	}{
		{name: "plain", o: backends.ExecOptions{Cmd: cmd}, want: cmd},
		{name: "same user", o: backends.ExecOptions{Cmd: cmd, User: "app"}, ctrUser: "app", want: cmd},
		{name: "root in a root container", o: backends.ExecOptions{Cmd: cmd, User: "root"}, want: cmd},
		{
			name: "workdir", o: backends.ExecOptions{Cmd: cmd, WorkingDir: "/w"},
			want: []string{"/bin/sh", "-c", `cd "$0" && exec "$@"`, "/w", "sh", "-c", "pwd"},
		},
		{
			name: "user, env and workdir", o: backends.ExecOptions{Cmd: cmd, User: "app", Env: []string{"A=1"}, WorkingDir: "/w"},
			want: []string{
				"su", "-s", "/bin/sh", "-c", `exec "$0" "$@"`, "--", "app",
				"env", "A=1", "/bin/sh", "-c", `cd "$0" && exec "$@"`, "/w", "sh", "-c", "pwd",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := wrapExec(tc.o, tc.ctrUser); !slices.Equal(got, tc.want) {
				t.Errorf("wrapExec:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
