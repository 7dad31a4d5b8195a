package server

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// The tokens file holds one line per client token:
//
//	NAME:sha256:HEX created=RFC3339 [role=operator]
//
// HEX is the SHA-256 digest of the token, never the token: whoever reads
// the file (a backup, a misconfigured volume) learns no credential. A
// digest is enough for tokens of 256 random bits: there is nothing to
// brute-force. Lines of the older NAME:TOKEN form are read, then the file
// is rewritten with digests (migrate).

// TokenPrefix starts every token cornus mints, so a leaked one is easy
// to recognize and to scan for (cornus_ then 43 base64url characters).
const TokenPrefix = "cornus_"

// RoleOperator is the role of a token that may adopt projects nobody
// deployed through the server and hand them to a tenant.
const RoleOperator = "operator"

type digest [sha256.Size]byte

func digestOf(token string) digest { return sha256.Sum256([]byte(token)) }

// TokenEntry is one line of the tokens file.
type TokenEntry struct {
	Name    string
	Digest  digest
	Created time.Time // zero when the line predates created=
	Role    string    // "" (a tenant) or RoleOperator
	plain   bool      // read from a NAME:TOKEN line
}

// DigestPrefix is the start of the token's digest, to tell two tokens of
// one name apart in listings.
func (e TokenEntry) DigestPrefix() string { return hex.EncodeToString(e.Digest[:4]) }

// NewToken returns a fresh random token.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// readTokensFile reads path ([] when it does not exist).
func readTokensFile(path string) ([]TokenEntry, error) {
	data, err := boundedfile.Read(path, boundedfile.ServerState)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	return parseTokens(path, data)
}

// parseTokens reads token lines (# comments, blank lines).
func parseTokens(path string, data []byte) ([]TokenEntry, error) {
	var out []TokenEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseTokenLine(line)
		if err != nil {
			// Never echo the line: it may hold a token.
			return nil, fmt.Errorf("tokens file %s line %d: %w", path, n, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseTokenLine(line string) (TokenEntry, error) {
	const want = "want NAME:sha256:HEX [created=TIME] [role=operator] (or an old NAME:TOKEN line) with a name of letters, digits, '-', '_' or '.'"
	name, rest, ok := strings.Cut(line, ":")
	if !ok || !validName(name) {
		return TokenEntry{}, errors.New(want)
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return TokenEntry{}, errors.New(want)
	}
	e := TokenEntry{Name: name}
	if hexd, ok := strings.CutPrefix(fields[0], "sha256:"); ok {
		b, err := hex.DecodeString(hexd)
		if err != nil || len(b) != len(e.Digest) {
			return TokenEntry{}, fmt.Errorf("the digest is not 64 hex digits: %s", want)
		}
		copy(e.Digest[:], b)
	} else {
		if len(fields) != 1 || len(fields[0]) < 16 {
			return TokenEntry{}, fmt.Errorf("a token of 16 characters or more: %s", want)
		}
		e.Digest, e.plain = digestOf(fields[0]), true
		return e, nil
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "created":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return TokenEntry{}, fmt.Errorf("created=%q: want RFC 3339", v)
			}
			e.Created = t
		case "role":
			if v != RoleOperator {
				return TokenEntry{}, fmt.Errorf("role=%q: the only role is %s", v, RoleOperator)
			}
			e.Role = v
		default:
			return TokenEntry{}, fmt.Errorf("unknown field %q: %s", k, want)
		}
	}
	return e, nil
}

func (e TokenEntry) line() string {
	s := e.Name + ":sha256:" + hex.EncodeToString(e.Digest[:])
	if !e.Created.IsZero() {
		s += " created=" + e.Created.UTC().Format(time.RFC3339)
	}
	if e.Role != "" {
		s += " role=" + e.Role
	}
	return s
}

// writeTokensFile replaces path with entries, as digests (0600, atomic).
func writeTokensFile(path string, entries []TokenEntry) error {
	var b strings.Builder
	b.WriteString("# cornus serve client tokens: NAME:sha256:DIGEST created=TIME [role=operator]\n")
	b.WriteString("# Digests only; `cornus token create NAME` prints a new token once.\n")
	for _, e := range entries {
		b.WriteString(e.line() + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, time.Now().UnixNano())
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("tokens file: %w", err)
	}
	return nil
}

// hasPlain reports whether entries came from NAME:TOKEN lines.
func hasPlain(entries []TokenEntry) bool {
	return slices.ContainsFunc(entries, func(e TokenEntry) bool { return e.plain })
}

// lockTokensFile serializes edits of path between cornus processes (the
// server migrating, `cornus token` adding or revoking).
func lockTokensFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tokens file lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("tokens file lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// editTokensFile runs edit on the file's entries under its lock and
// writes the result.
func editTokensFile(path string, edit func([]TokenEntry) ([]TokenEntry, error)) error {
	unlock, err := lockTokensFile(path)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := readTokensFile(path)
	if err != nil {
		return err
	}
	if entries, err = edit(entries); err != nil {
		return err
	}
	return writeTokensFile(path, entries)
}

// AddClientToken adds a token for tenant name (role "" or RoleOperator)
// to the tokens file, as its digest, and returns the token: the only
// time it is shown.
func AddClientToken(path, name, role string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("token name %q: use letters, digits, '-', '_' or '.', at most 64", name)
	}
	if role != "" && role != RoleOperator {
		return "", fmt.Errorf("token role %q: the only role is %s", role, RoleOperator)
	}
	tok := NewToken()
	err := editTokensFile(path, func(es []TokenEntry) ([]TokenEntry, error) {
		if slices.ContainsFunc(es, func(e TokenEntry) bool { return e.Name == name }) {
			return nil, fmt.Errorf("a token named %s exists: revoke it first (cornus token revoke %s) or choose another name", name, name)
		}
		return append(es, TokenEntry{Name: name, Digest: digestOf(tok), Created: time.Now().UTC().Truncate(time.Second), Role: role}), nil
	})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// RevokeClientToken removes every token of name from the tokens file; a
// running server closes that tenant's sessions, relays and requests
// within a second.
func RevokeClientToken(path, name string) error {
	return editTokensFile(path, func(es []TokenEntry) ([]TokenEntry, error) {
		out := slices.DeleteFunc(slices.Clone(es), func(e TokenEntry) bool { return e.Name == name })
		if len(out) == len(es) {
			return nil, fmt.Errorf("no token named %s in %s", name, path)
		}
		return out, nil
	})
}

// ListClientTokens reads the tokens file (migrating plain tokens).
func ListClientTokens(path string) ([]TokenEntry, error) {
	entries, err := readTokensFile(path)
	if err != nil || !hasPlain(entries) {
		return entries, err
	}
	return entries, editTokensFile(path, func(es []TokenEntry) ([]TokenEntry, error) { return es, nil })
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
