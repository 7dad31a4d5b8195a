package client

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// Each source mints what it holds; an expiry is read where the value
// names one (AWS's credential_process, or a lower-case "expiration"), a
// bad one refused; a failing command is reported with its error output.
func TestMint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "tok")
	if err := os.WriteFile(file, []byte("from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	exp := "2031-01-02T03:04:05Z"
	// A docker credential helper on the client's PATH: a login for one
	// registry, an identity token for another, none for the rest.
	helper := `#!/bin/sh
read -r host
case "$host" in
r.example) echo '{"ServerURL":"r.example","Username":"ci","Secret":"pw"}' ;;
t.example) echo '{"ServerURL":"t.example","Username":"<token>","Secret":"refresh"}' ;;
*) echo "credentials not found in native keychain"; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker-credential-cornustest"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		src     spec.CredentialSource
		value   string
		expires string
		err     string
	}{
		{"command", spec.CredentialSource{Command: []string{"echo", "plain"}}, "plain\n", "", ""},
		{"aws process", spec.CredentialSource{Command: []string{"printf", `{"Version":1,"AccessKeyId":"A","Expiration":"` + exp + `"}`}}, "", exp, ""},
		{"lower expiration", spec.CredentialSource{Command: []string{"printf", `{"token":"t","expiration":"` + exp + `"}`}}, "", exp, ""},
		{"bad expiration", spec.CredentialSource{Command: []string{"printf", `{"expiration":"tomorrow"}`}}, "", "", "not an RFC 3339 time"},
		{"failing command", spec.CredentialSource{Command: []string{"sh", "-c", "echo no login >&2; exit 3"}}, "", "", "exit status 3: no login"},
		{"missing command", spec.CredentialSource{Command: []string{filepath.Join(dir, "absent")}}, "", "", "absent"},
		{"file", spec.CredentialSource{File: file}, "from-file", "", ""},
		{"missing file", spec.CredentialSource{File: file + "x"}, "", "", "no such file"},
		{"env", spec.CredentialSource{Env: "TOK"}, "from-env", "", ""},
		{"unset env", spec.CredentialSource{Env: "UNSET"}, "", "", "UNSET is not set"},
		{"too big", spec.CredentialSource{Command: []string{"head", "-c", "300000", "/dev/zero"}}, "", "", "more than"},
		{"helper", spec.CredentialSource{Helper: "cornustest", Registry: "r.example"}, `{"auths":{"r.example":{"auth":"Y2k6cHc="}}}`, "", ""},
		{"helper token", spec.CredentialSource{Helper: "cornustest", Registry: "t.example"}, `{"auths":{"t.example":{"identitytoken":"refresh"}}}`, "", ""},
		{"helper without a login", spec.CredentialSource{Helper: "cornustest", Registry: "x.example"}, "", "", "docker-credential-cornustest has none"},
		{"missing helper", spec.CredentialSource{Helper: "absent", Registry: "r.example"}, "", "", "docker-credential-absent is not on PATH"},
	} {
		v, err := Mint(ctx, c.src, []string{"TOK=from-env", "PATH=" + dir + ":" + os.Getenv("PATH")})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.value != "" && string(v.Value) != c.value {
			t.Errorf("%s: value %q, want %q", c.name, v.Value, c.value)
		}
		if got := v.Expiration.Format(time.RFC3339); (c.expires == "") != v.Expiration.IsZero() || (c.expires != "" && got != c.expires) {
			t.Errorf("%s: expiration %v, want %q", c.name, v.Expiration, c.expires)
		}
	}
}

// The handler mints only what its own copy declares with a source (one
// declared without, "nosrc", has none to mint from).
func TestCredentialHandlerRefuses(t *testing.T) {
	h := CredentialHandler(map[string]map[string]spec.CredentialSource{"app": {"tok": {Env: "TOK"}}}, []string{"TOK=v"})
	for _, o := range []*api.CredentialOpen{nil, {Service: "app", Name: "other"}, {Service: "db", Name: "tok"}, {Service: "app", Name: "nosrc"}} {
		a, b := net.Pipe()
		go h(api.StreamHeader{Op: api.OpCredential, Credential: o}, b)
		var r api.DialReply
		if err := json.NewDecoder(a).Decode(&r); err != nil || r.Error == nil {
			t.Errorf("%+v: %+v, %v: want a refusal", o, r, err)
			a.Close()
			continue
		}
		if err := r.Error.Err(); err == nil || (!errdefs.IsPermissionDenied(err) && !errdefs.IsInvalidArgument(err)) {
			t.Errorf("%+v: %v, want a refusal", o, err)
		}
		a.Close()
	}
}
