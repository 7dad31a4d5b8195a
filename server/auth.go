package server

import (
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// identity is who a request authenticated as: a client (tenant) or a
// deployment's caretaker.
type identity struct {
	tenant string // client token's name; "" for a caretaker
	role   string // the client token's role
	token  digest // the client token used
	// caretaker is the grant of a caretaker token: the deployment
	// generation of one tenant's project it relays for.
	caretaker *grant
}

// grant binds a caretaker token to a tenant's project and to one
// deployment generation of it (owners.epoch): a down, another tenant's
// later deployment of the name, or the tenant's revocation ends it.
type grant struct {
	Tenant  string `json:"tenant"`
	Project string `json:"project"`
	Epoch   string `json:"epoch"`
}

// tokens holds the client tokens of the tokens file (re-read when it
// changes) and the caretaker tokens the server minted. Tokens are kept,
// stored and compared as SHA-256 digests: lookups leak nothing about a
// token, and the final comparison is constant-time.
type tokens struct {
	path string
	log  *slog.Logger

	mu        sync.Mutex
	stamp     string // the file's size and mtime when last read
	clients   map[digest]TokenEntry
	caretaker map[digest]grant
	store     string // caretakers.json
	used      map[string]time.Time
	usedPath  string // tokens-used.json: when each name last authenticated
}

func newTokens(path, stateDir string, log *slog.Logger) (*tokens, error) {
	t := &tokens{path: path, log: log, store: filepath.Join(stateDir, "caretakers.json"),
		caretaker: map[digest]grant{}, usedPath: filepath.Join(stateDir, "tokens-used.json"), used: map[string]time.Time{}}
	if err := t.reload(); err != nil {
		return nil, err
	}
	if err := t.loadCaretakers(); err != nil {
		return nil, err
	}
	if data, err := boundedfile.Read(t.usedPath, boundedfile.ServerState); err == nil {
		_ = json.Unmarshal(data, &t.used)
	}
	return t, nil
}

// reload re-reads the tokens file when its size or mtime changed. Plain
// tokens found are rewritten as digests.
func (t *tokens) reload() error {
	st, err := os.Stat(t.path)
	stamp := "missing"
	if err == nil {
		stamp = fmt.Sprint(st.Size(), st.ModTime().UnixNano(), st.Sys())
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("tokens file %s: %w", t.path, err)
	}
	t.mu.Lock()
	same := stamp == t.stamp
	t.mu.Unlock()
	if same {
		return nil
	}
	entries, err := readTokensFile(t.path)
	if err != nil {
		return err
	}
	if hasPlain(entries) {
		t.migrate(len(entries))
	}
	clients := make(map[digest]TokenEntry, len(entries))
	for _, e := range entries {
		clients[e.Digest] = e
	}
	t.mu.Lock()
	t.clients, t.stamp = clients, stamp
	t.mu.Unlock()
	return nil
}

// migrate rewrites a tokens file holding plain tokens as digests. A file
// the server cannot write (a mounted secret) keeps working, with a
// warning: only its digests are kept in memory.
func (t *tokens) migrate(n int) {
	err := editTokensFile(t.path, func(es []TokenEntry) ([]TokenEntry, error) { return es, nil })
	if err != nil {
		t.log.Warn("the tokens file holds plain tokens and could not be rewritten as digests: anyone who reads it holds those tokens", "file", t.path, "err", err)
		return
	}
	t.log.Info("the tokens file held plain tokens: rewritten as SHA-256 digests (the tokens stay valid)", "file", t.path, "lines", n)
}

// authenticate maps a bearer token to an identity.
func (t *tokens) authenticate(token string) (identity, bool) {
	if token == "" {
		return identity{}, false
	}
	_ = t.reload() // a broken file keeps the tokens last read
	d := digestOf(token)
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.clients {
		if subtle.ConstantTimeCompare(k[:], d[:]) == 1 {
			t.noteUsedLocked(e.Name)
			return identity{tenant: e.Name, role: e.Role, token: k}, true
		}
	}
	if g, ok := t.caretaker[d]; ok && t.hasTenantLocked(g.Tenant) {
		return identity{caretaker: &g}, true
	}
	return identity{}, false
}

// noteUsedLocked records when name last authenticated (written at most
// once a minute per name, for `cornus token list`).
func (t *tokens) noteUsedLocked(name string) {
	now := time.Now().UTC()
	if now.Sub(t.used[name]) < time.Minute {
		return
	}
	t.used[name] = now.Truncate(time.Second)
	_ = writeFileAtomic(t.usedPath, t.used)
}

// hasTenant reports whether name has a client token (re-reading a
// changed file).
func (t *tokens) hasTenant(name string) bool {
	_ = t.reload()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hasTenantLocked(name)
}

func (t *tokens) hasTenantLocked(name string) bool {
	for _, e := range t.clients {
		if e.Name == name {
			return true
		}
	}
	return false
}

// valid reports whether an identity's token still stands: the client
// token is still in the file, or the caretaker's tenant still has one.
func (t *tokens) valid(id identity) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id.caretaker != nil {
		return t.hasTenantLocked(id.caretaker.Tenant)
	}
	_, ok := t.clients[id.token]
	return ok
}

// mintCaretaker mints a caretaker token for g (one per up: the
// companions it creates carry it). Earlier ones of the same generation
// stay valid, so companions of an earlier up keep relaying, until the
// generation ends; they are stored as digests and survive restarts.
func (t *tokens) mintCaretaker(g grant) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	var oldest digest
	for d, h := range t.caretaker {
		if h == g {
			n++
			oldest = d // any: the bound matters, not which one goes
		}
	}
	if n >= maxCaretakerTokens {
		delete(t.caretaker, oldest)
	}
	tok := NewToken()
	t.caretaker[digestOf(tok)] = g
	return tok, t.saveCaretakersLocked()
}

// maxCaretakerTokens bounds the live caretaker tokens of one deployment.
const maxCaretakerTokens = 32

// forgetCaretaker revokes every caretaker token of project.
func (t *tokens) forgetCaretaker(project string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.caretaker)
	for d, g := range t.caretaker {
		if g.Project == project {
			delete(t.caretaker, d)
		}
	}
	if len(t.caretaker) != n {
		_ = t.saveCaretakersLocked()
	}
}

// caretakerFile is caretakers.json: digests and their grants only.
type caretakerFile struct {
	Grants map[string]grant `json:"grants"` // hex digest → grant
}

func (t *tokens) loadCaretakers() error {
	data, err := boundedfile.Read(t.store, boundedfile.ServerState)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("caretaker tokens: %w", err)
	}
	var f caretakerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("caretaker tokens %s: %w", t.store, err)
	}
	// An older file (no grants) held tokens bound to a project name only:
	// they are dropped, not trusted.
	for hexd, g := range f.Grants {
		var d digest
		if b, err := hex.DecodeString(hexd); err == nil && len(b) == len(d) && g.Tenant != "" && g.Epoch != "" {
			copy(d[:], b)
			t.caretaker[d] = g
		}
	}
	return nil
}

func (t *tokens) saveCaretakersLocked() error {
	f := caretakerFile{Grants: map[string]grant{}}
	for d, g := range t.caretaker {
		f.Grants[hex.EncodeToString(d[:])] = g
	}
	return writeFileAtomic(t.store, f)
}

// LastUsed reads when each tenant last authenticated, from a server data
// dir's state (cornus token list).
func LastUsed(dataDir string) map[string]time.Time {
	out := map[string]time.Time{}
	if data, err := boundedfile.Read(filepath.Join(dataDir, "server", "tokens-used.json"), boundedfile.ServerState); err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}

// bearer is the request's bearer token ("" if none). The scheme is
// case-insensitive (RFC 9110 §11.1).
func bearer(h string) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

func writeFileAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, time.Now().UnixNano())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
