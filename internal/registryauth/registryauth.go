// Package registryauth finds this machine's registry login for a host as
// the docker CLI does: DOCKER_CONFIG's config.json (default
// ~/.docker/config.json), its credHelpers for the host, else its
// credsStore, else its auths; a helper is docker-credential-NAME, run
// with the host on stdin. It reads the client's side only: cornus serve
// never looks up logins of its own host for a tenant.
package registryauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/spec"
)

// dockerHubKey is the key docker login writes Docker Hub's login under.
const dockerHubKey = "https://index.docker.io/v1/"

// configFile is what config.json says about logins.
type configFile struct {
	Auths       map[string]authEntry `json:"auths"`
	CredsStore  string               `json:"credsStore"`
	CredHelpers map[string]string    `json:"credHelpers"`
}

type authEntry struct {
	Auth          string `json:"auth"` // base64 user:password
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
}

// Lookup returns the login for registry host (docker.io for Docker Hub)
// from the config environ points at; none is a zero login (Server set)
// and no error.
func Lookup(ctx context.Context, environ []string, host string) (spec.RegistryAuth, error) {
	none := spec.RegistryAuth{Server: host}
	path := configPath(environ)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return none, nil
	}
	if err != nil {
		return none, fmt.Errorf("registry login for %s: %w", host, err)
	}
	var cf configFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return none, fmt.Errorf("registry login for %s: %s: %w", host, path, err)
	}
	key := host
	if host == "docker.io" || host == "index.docker.io" {
		key = dockerHubKey
	}
	if helper := cf.CredHelpers[host]; helper != "" {
		return fromHelper(ctx, environ, helper, key, host)
	}
	if cf.CredsStore != "" {
		return fromHelper(ctx, environ, cf.CredsStore, key, host)
	}
	if e, ok := cf.Auths[key]; ok {
		return fromEntry(e, host, path)
	}
	for _, k := range slices.Sorted(maps.Keys(cf.Auths)) {
		if hostOf(k) == hostOf(key) {
			return fromEntry(cf.Auths[k], host, path)
		}
	}
	return none, nil
}

// configPath is DOCKER_CONFIG/config.json, else HOME/.docker/config.json.
func configPath(environ []string) string {
	if d := envlist.Get(environ, "DOCKER_CONFIG"); d != "" {
		return filepath.Join(d, "config.json")
	}
	home := envlist.Get(environ, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".docker", "config.json")
}

// hostOf is a config key's host: keys may be URLs (https://host/v1/).
func hostOf(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	h, _, _ := strings.Cut(key, "/")
	return h
}

func fromEntry(e authEntry, host, path string) (spec.RegistryAuth, error) {
	a := spec.RegistryAuth{Server: host, Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken}
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(e.Auth)
		if err != nil {
			return a, fmt.Errorf("registry login for %s: %s: auths: %w", host, path, err)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return a, fmt.Errorf("registry login for %s: %s: auths: want user:password", host, path)
		}
		a.Username, a.Password = user, pass
	}
	return a, nil
}

// fromHelper runs docker-credential-NAME get; a helper that has no login
// for the host answers so (exit 1, "credentials not found"): no login.
func fromHelper(ctx context.Context, environ []string, name, key, host string) (spec.RegistryAuth, error) {
	none := spec.RegistryAuth{Server: host}
	bin, err := lookPath(environ, "docker-credential-"+name)
	if err != nil {
		return none, fmt.Errorf("registry login for %s: %w", host, err)
	}
	cmd := exec.CommandContext(ctx, bin, "get")
	cmd.Env = environ
	cmd.Stdin = strings.NewReader(key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if msg := out.String() + errOut.String(); strings.Contains(strings.ToLower(msg), "credentials not found") {
			return none, nil
		}
		return none, fmt.Errorf("registry login for %s: docker-credential-%s: %w: %s", host, name, err, strings.TrimSpace(errOut.String()))
	}
	var r struct{ Username, Secret string }
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return none, fmt.Errorf("registry login for %s: docker-credential-%s's answer: %w", host, name, err)
	}
	if r.Username == "<token>" { // the helpers' mark of an identity token
		return spec.RegistryAuth{Server: host, IdentityToken: r.Secret}, nil
	}
	return spec.RegistryAuth{Server: host, Username: r.Username, Password: r.Secret}, nil
}

// lookPath finds an executable on environ's PATH (the command's, not
// this process's).
// On Windows a program is NAME.exe (or .cmd, .bat), with no mode bits to
// say it runs.
func lookPath(environ []string, name string) (string, error) {
	names, runs := []string{name}, func(m fs.FileMode) bool { return m&0o111 != 0 }
	if runtime.GOOS == "windows" {
		names, runs = []string{name + ".exe", name + ".cmd", name + ".bat"}, func(fs.FileMode) bool { return true }
	}
	for _, dir := range filepath.SplitList(envlist.Get(environ, "PATH")) {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && runs(st.Mode()) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s is not on PATH: install the credential helper config.json names, or remove it there", name)
}

// Helper asks docker-credential-NAME for host's login, as a credential
// source does (spec.CredentialSource.Helper): no login is an error here.
func Helper(ctx context.Context, environ []string, name, host string) (spec.RegistryAuth, error) {
	a, err := fromHelper(ctx, environ, name, host, host)
	if err == nil && a.Username == "" && a.IdentityToken == "" {
		err = fmt.Errorf("registry login for %s: docker-credential-%s has none (docker login %s stores one)", host, name, host)
	}
	return a, err
}

// ConfigJSON is a Docker config.json holding login a, as docker login
// writes it.
func ConfigJSON(a spec.RegistryAuth) []byte {
	e := map[string]string{}
	if a.IdentityToken != "" {
		e["identitytoken"] = a.IdentityToken
	} else {
		e["auth"] = base64.StdEncoding.EncodeToString([]byte(a.Username + ":" + a.Password))
	}
	b, _ := json.Marshal(map[string]map[string]map[string]string{"auths": {a.Server: e}})
	return b
}
