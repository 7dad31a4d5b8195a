package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/internal/headwriter"
	"github.com/cornus-dev/cornus/internal/registryauth"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// mintTimeout bounds a credential command: under the 20 s the server
// waits for the client's answer (api.OpenStream).
const mintTimeout = 15 * time.Second

// CredentialHandler answers the server's credential streams from this
// client's copy of the deployment's credential sources (service → name →
// source): only what the client itself declared is minted, whatever the
// server asks.
func CredentialHandler(sources map[string]map[string]spec.CredentialSource, environ []string) Handler {
	return func(h api.StreamHeader, st net.Conn) {
		defer st.Close()
		o := h.Credential
		if o == nil {
			Reply(st, fmt.Errorf("%w: a credential stream names no credential", errdefs.ErrInvalidArgument))
			return
		}
		src, ok := sources[o.Service][o.Name]
		if !ok {
			Reply(st, fmt.Errorf("%w: credential %q of service %s: this client's project declares no such credential with a source", errdefs.ErrPermissionDenied, o.Name, o.Service))
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), mintTimeout)
		defer cancel()
		v, err := Mint(ctx, src, environ)
		if err != nil {
			Reply(st, fmt.Errorf("credential %q of service %s: %w", o.Name, o.Service, err))
			return
		}
		Reply(st, nil)
		_ = json.NewEncoder(st).Encode(v)
	}
}

// Mint makes a credential from its source: a command's output, a file's
// content, an environment variable's value, a Docker config.json of a
// credential helper's registry login. An expiry is read from a
// JSON object's "Expiration" (AWS's credential_process) or "expiration".
func Mint(ctx context.Context, src spec.CredentialSource, environ []string) (api.CredentialValue, error) {
	var (
		value []byte
		err   error
	)
	switch {
	case len(src.Command) > 0:
		value, err = runSource(ctx, src.Command)
	case src.File != "":
		value, err = boundedfile.Read(src.File, api.MaxCredential)
	case src.Env != "":
		v, ok := envlist.Lookup(environ, src.Env)
		if !ok {
			return api.CredentialValue{}, fmt.Errorf("%w: the source variable %s is not set on this client", errdefs.ErrNotFound, src.Env)
		}
		value = []byte(v)
	case src.Helper != "":
		var a spec.RegistryAuth
		if a, err = registryauth.Helper(ctx, environ, src.Helper, src.Registry); err == nil {
			value = registryauth.ConfigJSON(a)
		}
	default:
		return api.CredentialValue{}, fmt.Errorf("%w: the credential has no source", errdefs.ErrInvalidArgument)
	}
	if err != nil {
		return api.CredentialValue{}, err
	}
	if len(value) > api.MaxCredential {
		return api.CredentialValue{}, fmt.Errorf("%w: %d bytes, more than the %d a credential may have", errdefs.ErrInvalidArgument, len(value), api.MaxCredential)
	}
	exp, err := expiration(value)
	return api.CredentialValue{Value: value, Expiration: exp}, err
}

// runSource runs a credential command and returns what it printed. Its
// error output is reported (shortened), never its output.
func runSource(ctx context.Context, argv []string) ([]byte, error) {
	var out bytes.Buffer
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = &headwriter.Writer{W: &out, N: api.MaxCredential + 1}
	cmd.Stderr = &headwriter.Writer{W: &stderr, N: 512}
	cmd.WaitDelay = 2 * time.Second // a child holding stdout past the timeout
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Errorf("the source command %s: %w%s", argv[0], err, msg)
	}
	return out.Bytes(), nil
}

// expiration reads a credential's expiry, if it is a JSON object that
// names one; a malformed one is an error (a credential refreshed never
// would fail at its expiry instead).
func expiration(value []byte) (time.Time, error) {
	trimmed := bytes.TrimSpace(value)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return time.Time{}, nil
	}
	var obj struct {
		Upper string `json:"Expiration"`
		Lower string `json:"expiration"`
	}
	if json.Unmarshal(trimmed, &obj) != nil {
		return time.Time{}, nil
	}
	raw := obj.Upper
	if raw == "" {
		raw = obj.Lower
	}
	if raw == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: the credential's expiration %q is not an RFC 3339 time", errdefs.ErrInvalidArgument, raw)
	}
	return t, nil
}

// ReadCredential reads a credential stream's answer (after its reply).
func ReadCredential(r io.Reader) (api.CredentialValue, error) {
	var v api.CredentialValue
	dec := json.NewDecoder(io.LimitReader(r, 2*api.MaxCredential))
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("reading the credential: %w", err)
	}
	return v, nil
}
