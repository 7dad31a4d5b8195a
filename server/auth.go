package server

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// TokenPrefix starts every token cornus mints, so a leaked one is easy
// to recognize (and to scan for).
const TokenPrefix = "cornus_"

// identity is who a request authenticated as: a client (tenant) or a
// deployment's caretaker.
type identity struct {
	tenant    string // client token's name
	caretaker string // project whose caretaker token was used
}

type digest [sha256.Size]byte

func digestOf(token string) digest { return sha256.Sum256([]byte(token)) }

// tokens holds the client tokens of the tokens file (re-read when it
// changes) and the caretaker tokens the server minted. Tokens are kept
// and compared as SHA-256 digests: lookups leak nothing about a token,
// and the final comparison is constant-time.
type tokens struct {
	path string

	mu        sync.Mutex
	stamp     string // the file's size and mtime when last read
	clients   map[digest]string
	caretaker map[digest]string   // digest → project
	byProject map[string][]digest // a deployment's live caretaker tokens, oldest first
	store     string              // caretakers.json
}

func newTokens(path, caretakerStore string) (*tokens, error) {
	t := &tokens{path: path, store: caretakerStore, caretaker: map[digest]string{}, byProject: map[string][]digest{}}
	if err := t.reload(); err != nil {
		return nil, err
	}
	if err := t.loadCaretakers(); err != nil {
		return nil, err
	}
	return t, nil
}

// reload re-reads the tokens file when its size or mtime changed.
func (t *tokens) reload() error {
	st, err := os.Stat(t.path)
	stamp := "missing"
	if err == nil {
		stamp = fmt.Sprint(st.Size(), st.ModTime().UnixNano())
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("tokens file %s: %w", t.path, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if stamp == t.stamp {
		return nil
	}
	clients := map[digest]string{}
	if stamp != "missing" {
		data, err := boundedfile.Read(t.path, boundedfile.ServerState)
		if err != nil {
			return fmt.Errorf("tokens file: %w", err)
		}
		if clients, err = parseTokens(t.path, data); err != nil {
			return err
		}
	}
	t.clients, t.stamp = clients, stamp
	return nil
}

// parseTokens reads "name:token" lines (# comments, blank lines).
func parseTokens(path string, data []byte) (map[digest]string, error) {
	out := map[digest]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, tok, ok := strings.Cut(line, ":")
		if !ok || !validName(name) || len(tok) < 16 {
			// Never echo the line: it may hold a token.
			return nil, fmt.Errorf("tokens file %s line %d: want NAME:TOKEN with a name of letters, digits, '-', '_' or '.' and a token of 16 characters or more", path, n)
		}
		out[digestOf(tok)] = name
	}
	return out, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
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
	for k, name := range t.clients {
		if subtle.ConstantTimeCompare(k[:], d[:]) == 1 {
			return identity{tenant: name}, true
		}
	}
	if p, ok := t.caretaker[d]; ok {
		return identity{caretaker: p}, true
	}
	return identity{}, false
}

// NewToken returns a fresh random token.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// AddClientToken appends NAME:TOKEN to the tokens file (created 0600) and
// returns the token (cornus token create).
func AddClientToken(path, name string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("token name %q: use letters, digits, '-', '_' or '.', at most 64", name)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", fmt.Errorf("tokens file: %w", err)
	}
	defer f.Close()
	tok := NewToken()
	if _, err := fmt.Fprintf(f, "%s:%s\n", name, tok); err != nil {
		return "", fmt.Errorf("tokens file: %w", err)
	}
	return tok, f.Close()
}

// mintCaretaker mints a caretaker token for project (one per up: the
// companions it creates carry it). Earlier ones stay valid, so companions
// of an earlier up keep relaying, until the deployment is gone (at most
// maxCaretakerTokens per deployment, the oldest dropped first); they stay
// valid across server restarts.
func (t *tokens) mintCaretaker(project string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := NewToken()
	d := digestOf(tok)
	ds := append(t.byProject[project], d)
	if len(ds) > maxCaretakerTokens {
		delete(t.caretaker, ds[0])
		ds = ds[1:]
	}
	t.caretaker[d], t.byProject[project] = project, ds
	return tok, t.saveCaretakersLocked()
}

// maxCaretakerTokens bounds the live caretaker tokens of one deployment.
const maxCaretakerTokens = 32

// forgetCaretaker revokes project's caretaker tokens (its deployment is
// gone).
func (t *tokens) forgetCaretaker(project string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ds, ok := t.byProject[project]; ok {
		for _, d := range ds {
			delete(t.caretaker, d)
		}
		delete(t.byProject, project)
		_ = t.saveCaretakersLocked()
	}
}

// caretakers.json keeps digests only.
type caretakerFile struct {
	Tokens map[string][]string `json:"tokens"` // project → hex digests
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
	for p, hexds := range f.Tokens {
		for _, hexd := range hexds {
			var d digest
			if b, err := hex.DecodeString(hexd); err == nil && len(b) == len(d) {
				copy(d[:], b)
				t.caretaker[d] = p
				t.byProject[p] = append(t.byProject[p], d)
			}
		}
	}
	return nil
}

func (t *tokens) saveCaretakersLocked() error {
	f := caretakerFile{Tokens: map[string][]string{}}
	for p, ds := range t.byProject {
		for _, d := range ds {
			f.Tokens[p] = append(f.Tokens[p], hex.EncodeToString(d[:]))
		}
	}
	return writeFileAtomic(t.store, f)
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
