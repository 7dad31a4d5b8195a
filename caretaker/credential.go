package caretaker

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// The credential role: the replica's credentials, fetched from the
// deployment's client through the relay when needed, delivered as files
// on a tmpfs (rewritten before they expire) or on the AWS
// container-credentials endpoint. Nothing is written to a disk: the files
// live in memory, the endpoint's answers in the process.

// CredentialPort is the AWS container-credentials endpoint's port on the
// replica's loopback.
const CredentialPort = 15002

// credentialsSubdir is where, below the shared volume, the companion
// mounts the tmpfs of the file credentials.
const credentialsSubdir = "credentials"

// awsSubdir holds, in the shared volume of a companion beside its app,
// the AWS endpoint's socket (awsSocket), to which the backend passes the
// app's loopback port (backends.LoopbackSocket). The app does not bind it.
const (
	awsSubdir = "aws"
	awsSocket = "endpoint.sock"
)

// awsPath is the endpoint's path of credential name.
func awsPath(name string) string { return "/v1/credentials/" + name }

// refreshRetry bounds the wait between failed fetches.
const refreshRetry = 30 * time.Second

// noExpiryRefresh is how often a credential without an expiry is minted
// again (a file the client rotates, say).
const noExpiryRefresh = 5 * time.Minute

type credentialRole struct {
	ctx     context.Context // the role's lifetime
	relay   *serverRelay
	service string
	log     *slog.Logger

	fetchMu sync.Mutex         // one endpoint fetch at a time
	cache   map[string]fetched // the endpoint's, until its refresh time
}

type fetched struct {
	v       api.CredentialValue
	refresh time.Time
}

// fetch asks the client for credential name, through the server.
func (r *credentialRole) fetch(ctx context.Context, name string) (fetched, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := r.relay.Open(ctx, api.StreamHeader{Op: api.OpCredential, Credential: &api.CredentialOpen{Service: r.service, Name: name}})
	if err != nil {
		return fetched{}, fmt.Errorf("credential %s: %w", name, err)
	}
	defer st.Close()
	v, err := client.ReadCredential(st)
	if err != nil {
		return fetched{}, fmt.Errorf("credential %s: %w", name, err)
	}
	now := time.Now()
	if !v.Expiration.IsZero() && !v.Expiration.After(now) {
		// Retried with a backoff, not minted again at once.
		return fetched{}, fmt.Errorf("credential %s: the client minted it expired already (%s)", name, v.Expiration.Format(time.RFC3339))
	}
	return fetched{v: v, refresh: refreshAt(now, v.Expiration)}, nil
}

// refreshAt is when a credential minted at now is minted again: a fifth
// of its lifetime before it expires, at most five minutes before, and
// not within minRefresh (fetch refuses one that has expired already).
func refreshAt(now, exp time.Time) time.Time {
	if exp.IsZero() {
		return now.Add(noExpiryRefresh)
	}
	early := min(exp.Sub(now)/5, 5*time.Minute)
	return later(exp.Add(-early), now.Add(minRefresh))
}

// minRefresh bounds how often one credential is minted.
const minRefresh = time.Second

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// startFiles mounts the tmpfs (where mount says the companion makes it),
// writes every file credential, and keeps
// each rewritten before it expires; the first fetch of each must succeed
// (the app starts with its credentials). undo stops the refreshes and
// unmounts.
func (r *credentialRole) startFiles(ctx context.Context, names []string, mount bool) (undo func(), err error) {
	dir := sharedPath(credentialsSubdir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if mount {
		// In memory, never on the volume's disk; the app's bind follows
		// it (the shared volume propagates). A companion restarted after
		// a crash finds its predecessor's: gone first.
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=16m,mode=0755"); err != nil {
			return nil, fmt.Errorf("credentials: a tmpfs at %s: %w", dir, err)
		}
	}
	if !mount {
		if err := inMemory(dir); err != nil {
			return nil, err
		}
	}
	// The refreshers end before the tmpfs goes: a late write would land
	// on the volume's disk below it.
	ctx, cancel := context.WithCancel(ctx)
	var refreshers sync.WaitGroup
	undo = func() {
		cancel()
		refreshers.Wait()
		if !mount {
			return
		}
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			r.log.Warn("unmount the credentials' tmpfs", "error", err.Error())
		}
	}
	// At once, not one after another: the engine waits for the companion
	// a bounded time.
	first := make([]fetched, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			if first[i], errs[i] = r.fetch(ctx, name); errs[i] == nil {
				errs[i] = writeCredential(dir, name, first[i].v.Value)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		undo()
		return nil, fmt.Errorf("caretaker: %w", err)
	}
	for i, name := range names {
		refreshers.Go(func() { r.keepFile(ctx, dir, name, first[i].refresh) })
	}
	return undo, nil
}

// keepFile rewrites credential name's file at each refresh time until ctx
// ends; a failed fetch is retried, the old file kept meanwhile.
func (r *credentialRole) keepFile(ctx context.Context, dir, name string, next time.Time) {
	retry := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		f, err := r.fetch(ctx, name)
		if err == nil {
			err = writeCredential(dir, name, f.v.Value)
		}
		if err != nil {
			r.log.Warn("refresh a credential", "name", name, "error", err.Error())
			next, retry = time.Now().Add(retry), min(retry*2, refreshRetry)
			continue
		}
		next, retry = f.refresh, time.Second
	}
}

// inMemory refuses a credentials directory on a disk: a volume's or a
// directory's that a backend should have put in memory and did not.
func inMemory(dir string) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if fs.Type != unix.TMPFS_MAGIC {
		return fmt.Errorf("credentials: %s is not in memory (file system %#x, not a tmpfs): no credential is written to a disk", dir, fs.Type)
	}
	return nil
}

// writeCredential replaces name's file in dir at once (a reader sees the
// old file or the new one, never part of one).
func writeCredential(dir, name string, value []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(value)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("credential %s: %w", name, err)
	}
	return nil
}

// serveAWS serves the AWS container-credentials endpoint of names on the
// replica's loopback (beside the app, on the socket its loopback port is
// passed to), answering only requests with token (the app's
// AWS_CONTAINER_AUTHORIZATION_TOKEN).
func (r *credentialRole) serveAWS(ctx context.Context, wg *sync.WaitGroup, names []string, token string, beside bool) error {
	ln, err := awsListener(beside)
	if err != nil {
		return fmt.Errorf("caretaker: credentials endpoint: %w", err)
	}
	mux := http.NewServeMux()
	for _, name := range names {
		mux.HandleFunc("GET "+awsPath(name), func(w http.ResponseWriter, req *http.Request) {
			if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), []byte(token)) != 1 {
				http.Error(w, "a wrong or missing authorization token", http.StatusUnauthorized)
				return
			}
			body, err := r.awsAnswer(req.Context(), name)
			if err != nil {
				r.log.Warn("serve a credential", "name", name, "error", err.Error())
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	wg.Go(func() { _ = srv.Serve(ln) })
	wg.Go(func() {
		<-ctx.Done()
		_ = srv.Close()
	})
	return nil
}

// awsAnswer is the endpoint's answer for name: the cached credential
// until its refresh time, then a new one; while a new one cannot be had,
// the cached one until it expires. One fetch at a time, on the role's
// context: an SDK that gives up after a second does not cancel a slow
// mint, whose result its retry finds.
func (r *credentialRole) awsAnswer(ctx context.Context, name string) ([]byte, error) {
	r.fetchMu.Lock()
	defer r.fetchMu.Unlock()
	f, ok := r.cache[name]
	if now := time.Now(); !ok || !now.Before(f.refresh) {
		g, err := r.fetch(r.ctx, name)
		switch {
		case err == nil:
			f, r.cache[name] = g, g
		case ok && (f.v.Expiration.IsZero() || now.Before(f.v.Expiration)):
			r.log.Warn("refresh a credential: serving the one it replaces", "name", name, "error", err.Error())
		default:
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return awsContainerCredentials(f.v.Value)
}

// awsContainerCredentials converts what AWS's credential_process prints
// into the container-credentials endpoint's answer.
func awsContainerCredentials(process []byte) ([]byte, error) {
	var in struct {
		Version         int
		AccessKeyID     string `json:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      string
	}
	if err := json.Unmarshal(process, &in); err != nil || in.AccessKeyID == "" || in.SecretAccessKey == "" {
		return nil, fmt.Errorf("an aws credential must be what AWS's credential_process prints (JSON with AccessKeyId and SecretAccessKey)")
	}
	return json.Marshal(struct {
		AccessKeyID     string `json:"AccessKeyId"`
		SecretAccessKey string `json:"SecretAccessKey"`
		Token           string `json:"Token,omitempty"`
		Expiration      string `json:"Expiration,omitempty"`
	}{in.AccessKeyID, in.SecretAccessKey, in.SessionToken, in.Expiration})
}

// awsListener is where the AWS endpoint listens: the replica's loopback,
// or, beside the app, a socket in the volume they share (a predecessor's,
// left by a crash, replaced).
func awsListener(beside bool) (net.Listener, error) {
	if !beside {
		return net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(CredentialPort))
	}
	dir := sharedPath(awsSubdir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, awsSocket)
	_ = os.Remove(sock)
	return net.Listen("unix", sock)
}

// runCredentials starts the role for c's credentials; undo ends what
// outlives ctx (the tmpfs).
func runCredentials(ctx context.Context, wg *sync.WaitGroup, c Config, relay *serverRelay, log *slog.Logger) (func(), error) {
	if relay == nil {
		return nil, fmt.Errorf("caretaker: credentials need the server's relay (remote mode)")
	}
	var files, aws []string
	for _, cr := range c.Credentials {
		if cr.Deliver == spec.DeliverAWS {
			aws = append(aws, cr.Name)
		} else {
			files = append(files, cr.Name)
		}
	}
	if len(aws) > 0 && len(c.CredentialToken) < 32 {
		return nil, fmt.Errorf("caretaker: the AWS endpoint needs its authorization token (%d bytes)", len(c.CredentialToken))
	}
	r := &credentialRole{ctx: ctx, relay: relay, service: c.Service, log: log, cache: map[string]fetched{}}
	undo := func() {}
	if len(files) > 0 {
		u, err := r.startFiles(ctx, files, c.MountCredentials)
		if err != nil {
			return nil, err
		}
		undo = u
	}
	if len(aws) > 0 {
		// Minted before the app starts, as the files are: a source that
		// fails or prints no credential_process JSON fails the up.
		for _, name := range aws {
			if _, err := r.awsAnswer(ctx, name); err != nil {
				undo()
				return nil, fmt.Errorf("caretaker: %w", err)
			}
		}
		if err := r.serveAWS(ctx, wg, aws, c.CredentialToken, c.Sibling); err != nil {
			undo()
			return nil, err
		}
	}
	log.Info("credentials", "service", c.Service, "files", len(files), "aws", len(aws))
	return undo, nil
}
