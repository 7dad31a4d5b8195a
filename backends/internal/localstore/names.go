package localstore

import (
	"fmt"
	"strings"

	"github.com/containerd/errdefs"
)

// ValidName is Docker's rule for names of volumes and containers: they
// become path elements here.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 255 {
		return fmt.Errorf("%q is not a valid name: %w", name, errdefs.ErrInvalidArgument)
	}
	return nil
}
