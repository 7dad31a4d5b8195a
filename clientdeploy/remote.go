package clientdeploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/client"
)

// Client configuration.
const (
	envServer = "CORNUS_SERVER"
	envToken  = "CORNUS_TOKEN"
	// envServerCA names a PEM file of CA certificates to trust for the
	// server (a private or self-signed certificate).
	envServerCA = "CORNUS_SERVER_CA"
)

// ServerURL is flag (--server), else $CORNUS_SERVER ("": deploy locally).
func ServerURL(flag string, environ []string) string {
	if flag != "" {
		return flag
	}
	return envlist.Get(environ, envServer)
}

// LoginFile is where cornus login keeps tokens: the user's config dir.
func LoginFile(environ []string) (string, error) {
	dir := envlist.Get(environ, "XDG_CONFIG_HOME")
	if dir == "" {
		home := envlist.Get(environ, "HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			home = h
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "cornus", "servers.json"), nil
}

// logins is servers.json: a token per server URL.
type logins struct {
	Servers map[string]string `json:"servers"`
}

func readLogins(path string) (logins, error) {
	l := logins{Servers: map[string]string{}}
	data, err := boundedfile.Read(path, boundedfile.ServerState)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("%s: %w (remove it and log in again)", path, err)
	}
	if l.Servers == nil {
		l.Servers = map[string]string{}
	}
	return l, nil
}

// SaveLogin stores url's token in the login file at path, readable by
// the user only.
func SaveLogin(path, url, token string) error {
	l, err := readLogins(path)
	if err != nil {
		return err
	}
	l.Servers[strings.TrimRight(url, "/")] = token
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(l, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// tokenFor is $CORNUS_TOKEN, else the token cornus login stored for url.
func tokenFor(url string, environ []string) (string, error) {
	if t := envlist.Get(environ, envToken); t != "" {
		return t, nil
	}
	path, err := LoginFile(environ)
	if err != nil {
		return "", err
	}
	l, err := readLogins(path)
	if err != nil {
		return "", err
	}
	return l.Servers[strings.TrimRight(url, "/")], nil
}

// NewClient is a client of url with the token environ or the login file
// has for it, trusting $CORNUS_SERVER_CA.
func NewClient(environ []string, url string) (*client.Client, error) {
	tok, err := tokenFor(url, environ)
	if err != nil {
		return nil, err
	}
	return NewClientToken(environ, url, tok)
}

// NewClientToken is a client of url with tok, trusting $CORNUS_SERVER_CA.
func NewClientToken(environ []string, url, tok string) (*client.Client, error) {
	c, err := client.New(url, tok)
	if err != nil {
		return nil, err
	}
	if ca := envlist.Get(environ, envServerCA); ca != "" {
		if err := c.TrustCA(ca); err != nil {
			return nil, fmt.Errorf("%s: %w", envServerCA, err)
		}
	}
	return c, nil
}

// remote is a server connection for one command, with the deploy-attach
// session it holds (if any).
type remote struct {
	client   *client.Client
	projects *client.Projects
	attach   *client.Session
}

func openRemote(s Streams, url string, pw progress.Writer) (*remote, error) {
	c, err := NewClient(s.Environ, url)
	if err != nil {
		return nil, err
	}
	c.Progress = pw
	c.Warn = func(w string) { fmt.Fprintf(s.Err, "WARN %s\n", w) }
	return &remote{client: c, projects: &client.Projects{Client: c, Environ: s.Environ}}, nil
}

func (r *remote) Close() {
	if r.attach != nil {
		_ = r.attach.Close()
	}
}
