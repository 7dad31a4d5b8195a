package localstore

import (
	"fmt"
	"strings"

	"github.com/containerd/errdefs"
)

// MatchLabels reports whether labels have match the filter want: every
// filter label must match; a value of "" only requires the key.
func MatchLabels(have, want map[string]string) bool {
	for k, v := range want {
		got, ok := have[k]
		if !ok || (v != "" && got != v) {
			return false
		}
	}
	return true
}

// ValidName is Docker's rule for names of volumes and containers: they
// become path elements here.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 255 {
		return fmt.Errorf("%q is not a valid name: %w", name, errdefs.ErrInvalidArgument)
	}
	return nil
}
