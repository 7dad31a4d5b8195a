package cni

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/containerd/errdefs"
)

// Limits on identifiers. IDs and network names become file names (netns
// pins, IPAM dirs, libcni cache files), so they stay well under NAME_MAX.
const (
	maxIDLen    = 128
	maxNameLen  = 253 // a DNS name, without the trailing dot
	maxLabelLen = 63
)

// bridgePrefix starts every bridge this package creates; the isolation rules
// match it with the iptables wildcard "cn-+".
const bridgePrefix = "cn-"

// validID checks a container ID or network name against libcni's rule
// (^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$) so the failure names our field before
// any plugin runs, and so it is a safe single path element.
func validID(kind, s string) error {
	if s == "" || len(s) > maxIDLen {
		return fmt.Errorf("%s %q: must be 1 to %d characters: %w", kind, s, maxIDLen, errdefs.ErrInvalidArgument)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum || i > 0 && (c == '_' || c == '.' || c == '-') {
			continue
		}
		return fmt.Errorf("%s %q: only letters, digits, '_', '.' and '-' allowed, starting with a letter or digit: %w",
			kind, s, errdefs.ErrInvalidArgument)
	}
	return nil
}

// validHostName checks a name that goes into a hosts file and the resolver:
// dot-separated labels of letters, digits, '-' and '_' (Compose service
// names may hold '_'). Anything else — spaces, '#', newlines — could forge
// hosts-file lines, so it is refused rather than escaped.
func validHostName(s string) error {
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("name %q: must be 1 to %d characters: %w", s, maxNameLen, errdefs.ErrInvalidArgument)
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > maxLabelLen {
			return fmt.Errorf("name %q: each dot-separated label must be 1 to %d characters: %w",
				s, maxLabelLen, errdefs.ErrInvalidArgument)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("name %q: only letters, digits, '-', '_' and '.' allowed: %w", s, errdefs.ErrInvalidArgument)
			}
		}
	}
	return nil
}

// nameKey is how names compare: DNS is case-insensitive.
func nameKey(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

// bridgeName is deterministic from the data dir and the network name, so a
// lost state file still finds the bridge and two data dirs (a user's and a
// test's) never share one: "cn-" + 12 hex digits of a SHA-256 = 15 chars,
// the kernel's IFNAMSIZ-1.
func bridgeName(dataDir, network string) string {
	sum := sha256.Sum256([]byte(dataDir + "\x00" + network))
	return bridgePrefix + hex.EncodeToString(sum[:6])
}
