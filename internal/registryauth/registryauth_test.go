package registryauth

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// TestLookup: each place config.json keeps a login, as docker login and
// the credential helpers write them.
func TestLookup(t *testing.T) {
	dir := t.TempDir()
	bin := t.TempDir()
	// A helper that knows one host and says "credentials not found" for
	// the rest, as docker-credential-* do.
	helper := `#!/bin/sh
read host
case "$host" in
helped.test:5000) echo '{"ServerURL":"helped.test:5000","Username":"hu","Secret":"hs"}' ;;
token.test) echo '{"ServerURL":"token.test","Username":"<token>","Secret":"refresh"}' ;;
*) echo "credentials not found in native keychain"; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-fake"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	config := `{
  "auths": {
    "https://index.docker.io/v1/": {"auth": "aHViOmh1YnBhc3M="},
    "127.0.0.1:5000": {"auth": "dXNlcjpwYXNzOndpdGg6Y29sb25z"},
    "https://url.test/v1/": {"username": "uu", "password": "up"}
  },
  "credHelpers": {"helped.test:5000": "fake", "token.test": "fake", "missing.test": "fake"}
}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"DOCKER_CONFIG=" + dir, "PATH=" + bin + ":/usr/bin:/bin"}
	for host, want := range map[string]spec.RegistryAuth{
		"docker.io":          {Username: "hub", Password: "hubpass"},
		"127.0.0.1:5000":     {Username: "user", Password: "pass:with:colons"},
		"url.test":           {Username: "uu", Password: "up"},
		"helped.test:5000":   {Username: "hu", Password: "hs"},
		"token.test":         {IdentityToken: "refresh"},
		"missing.test":       {},
		"nowhere.test:80":    {},
		"127.0.0.1:5001":     {},
		"index.docker.io:80": {},
	} {
		got, err := Lookup(context.Background(), env, host)
		want.Server = host
		if err != nil || got != want {
			t.Errorf("Lookup(%s) = %+v, %v; want %+v", host, got, err, want)
		}
	}
	if got, err := Lookup(context.Background(), []string{"DOCKER_CONFIG=" + t.TempDir()}, "docker.io"); err != nil || got != (spec.RegistryAuth{Server: "docker.io"}) {
		t.Errorf("no config.json: %+v %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup(context.Background(), env, "docker.io"); err == nil {
		t.Error("a broken config.json is no error")
	}
}
