package backends

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// MakeBindSource is what Bind.CreateHostPath asks for, as Docker and
// Compose do it: a missing source is made a directory; an existing one is
// left as it is (a single file, a socket) and bound as what it is.
// os.MkdirAll alone fails on an existing file ("not a directory").
func MakeBindSource(path string) error {
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bind source %s: %w", path, err)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("create bind source %s: %w", path, err)
	}
	return nil
}
