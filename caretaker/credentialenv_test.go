package caretaker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// An env credential starts the app through a shell that sets the
// variable from the credential's file and execs the app's own command; a
// missing file fails the start before the app runs. The script runs here
// under /bin/sh, its directory moved to a temporary one.
func TestEnvCredentialWrapper(t *testing.T) {
	c := companions(false, true)
	a := spec.App{Name: "web", Entrypoint: []string{"/app", "--serve"}, Command: []string{"x"},
		Credentials: []spec.Credential{{Name: "tok"}, {Name: "db.pw", Deliver: spec.DeliverEnv, Variable: "DB_PW"}, {Name: "k", Deliver: spec.DeliverEnv, Variable: "K"}}}
	att, ok, err := c.Attach(context.Background(), spec.Project{Name: "p"}, a, 1)
	if err != nil || !ok {
		t.Fatalf("companion %v: %v", ok, err)
	}
	if len(att.AppEntrypoint) != 4 || att.AppEntrypoint[0] != "/bin/sh" || !slices.Equal(att.AppCommand, []string{"/app", "--serve", "x"}) {
		t.Fatalf("the app's wrapper %q, command %q", att.AppEntrypoint, att.AppCommand)
	}
	script := att.AppEntrypoint[2]
	dir := t.TempDir()
	run := func() (string, error) {
		sh := strings.ReplaceAll(script, spec.CredentialDir, dir)
		out, err := exec.Command("/bin/sh", "-c", sh, credentialWrapper, "/bin/sh", "-c", `echo "$DB_PW|$K"`).CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err == nil || strings.Contains(out, "|") {
		t.Errorf("no file, yet the app ran: %q %v", out, err)
	}
	for name, v := range map[string]string{"db.pw": "pw-value\n", "k": "k 'value' $HOME"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := run(); err != nil || out != "pw-value|k 'value' $HOME\n" {
		t.Errorf("the app's environment: %q %v", out, err)
	}
}

// Without the service's entrypoint the wrapper needs the image's, which
// a backend without an image store (a cluster's nodes hold them) cannot
// read: refused, naming the credential and the fix.
func TestEnvCredentialNeedsEntrypoint(t *testing.T) {
	c := companions(true, true)
	a := spec.App{Name: "web", Image: "app:1", Command: []string{"serve"},
		Credentials: []spec.Credential{{Name: "k", Deliver: spec.DeliverEnv, Variable: "K"}}}
	_, _, err := c.Attach(context.Background(), spec.Project{Name: "p"}, a, 1)
	if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "services.web.credentials[0]") || !strings.Contains(err.Error(), "set the service's entrypoint") {
		t.Errorf("no entrypoint, no image store: %v", err)
	}
	a.Entrypoint = []string{"app"}
	if att, _, err := c.Attach(context.Background(), spec.Project{Name: "p"}, a, 1); err != nil || !slices.Equal(att.AppCommand, []string{"app", "serve"}) {
		t.Errorf("with the entrypoint: %q %v", att.AppCommand, err)
	}
}
