package builder

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"

	"github.com/moby/buildkit/session/secrets"
	"github.com/tonistiigi/fsutil"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/spec"
)

// Files is where a build reads what the client has: its directories (the
// context, the Dockerfile's, additional contexts, a stage's), its build
// secrets and its ssh agent. LocalFiles reads this machine's; a server
// reads its client's over the session (server package), which serves
// them with LocalFiles.
type Files interface {
	// Dir is the directory path as a build reads it: confined to it (no
	// path, symlink or ".." leaves it), less what excludes (ignore-file
	// patterns) name. done releases it.
	Dir(ctx context.Context, path string, excludes []string) (fs fsutil.FS, done func(), err error)
	// Secret is a build secret's value.
	Secret(ctx context.Context, s spec.BuildSecret) ([]byte, error)
	// Agent connects to the ssh agent a build's ssh entry names (the
	// client's own, SSH_AUTH_SOCK, when it names none).
	Agent(ctx context.Context, e spec.BuildSSH) (net.Conn, error)
}

// LocalFiles reads this machine's files; environ is the client's
// environment (SSH_AUTH_SOCK, secrets from variables).
type LocalFiles struct {
	Environ []string
}

var _ Files = LocalFiles{}

// Dir opens path through an os.Root, filtered by excludes.
func (LocalFiles) Dir(_ context.Context, path string, excludes []string) (fsutil.FS, func(), error) {
	fs, root, err := rootFS(path)
	if err != nil {
		return nil, nil, err
	}
	done := func() { _ = root.Close() }
	if len(excludes) == 0 {
		return fs, done, nil
	}
	filtered, err := fsutil.NewFilterFS(fs, &fsutil.FilterOpt{ExcludePatterns: excludes})
	if err != nil {
		done()
		return nil, nil, err
	}
	return filtered, done, nil
}

// Secret reads a secret's environment variable (or the value captured
// when the file was loaded) or its file, bounded.
func (f LocalFiles) Secret(_ context.Context, s spec.BuildSecret) ([]byte, error) {
	switch {
	case s.Value != nil:
		return []byte(*s.Value), nil
	case s.Environment != "":
		if v, ok := envlist.Lookup(f.Environ, s.Environment); ok {
			return []byte(v), nil
		}
		return nil, fmt.Errorf("secret %s: environment variable %s is not set: %w", s.ID, s.Environment, secrets.ErrNotFound)
	}
	return boundedfile.Read(s.File, boundedfile.SecretFile)
}

// Agent dials the entry's agent socket (the first of its paths, else
// SSH_AUTH_SOCK). Key files are not agents: load them into one.
func (f LocalFiles) Agent(ctx context.Context, e spec.BuildSSH) (net.Conn, error) {
	paths := e.Paths
	if len(paths) == 0 {
		sock, ok := envlist.Lookup(f.Environ, "SSH_AUTH_SOCK")
		if !ok || sock == "" {
			return nil, fmt.Errorf("build ssh %q: uses the client's ssh agent, and SSH_AUTH_SOCK is not set: start one (eval $(ssh-agent); ssh-add)", e.ID)
		}
		paths = []string{sock}
	}
	fi, err := os.Stat(paths[0])
	if err != nil {
		return nil, fmt.Errorf("build ssh %q: %w", e.ID, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return nil, fmt.Errorf("build ssh %q: %s is not an agent's socket: load the key into an agent (ssh-add) and name none", e.ID, paths[0])
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", paths[0])
}

// buildSecret finds secret id among b's.
func buildSecret(b spec.Build, id string) (spec.BuildSecret, error) {
	i := slices.IndexFunc(b.Secrets, func(s spec.BuildSecret) bool { return s.ID == id })
	if i < 0 {
		return spec.BuildSecret{}, fmt.Errorf("secret %s: not one of the build's secrets: %w", id, secrets.ErrNotFound)
	}
	return b.Secrets[i], nil
}
