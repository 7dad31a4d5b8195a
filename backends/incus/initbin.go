package incus

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/containerd/errdefs"
)

// initBinary installs the cornus executable containers run as their init
// (and exec helper) into the bin directory every container mounts
// read-only, once per build, and returns its file name there. The copy
// outlives the executable it came from (tests run a temporary one), and a
// container keeps the build it was created with.
func (b *Backend) initBinary() (string, error) {
	b.binOnce.Do(func() { b.bin, b.binErr = installInit(b.cfg) })
	return b.bin, b.binErr
}

func installInit(cfg config) (string, error) {
	src := cfg.initBinary
	if src == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("incus: find the cornus executable for containers' init: %w", err)
		}
		src = exe
	}
	st, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("incus: the init binary (%s): %w", EnvInitBinary, err)
	}
	if err := checkStatic(src); err != nil {
		return "", err
	}
	// Name the copy after the source's identity: same file, same copy.
	key := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", src, st.Size(), st.ModTime().UnixNano()))
	name := "cornus-" + hex.EncodeToString(key[:])[:16]
	dst := filepath.Join(cfg.binDir(), name)
	if _, err := os.Stat(dst); err == nil {
		return name, nil
	}
	if err := os.MkdirAll(cfg.binDir(), 0o755); err != nil {
		return "", fmt.Errorf("incus: init binary: %w", err)
	}
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("incus: init binary: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(cfg.binDir(), "."+name+".*")
	if err != nil {
		return "", fmt.Errorf("incus: init binary: %w", err)
	}
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("incus: init binary: %w", err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("incus: init binary: %w", err)
	}
	return name, nil
}

// checkStatic refuses a dynamically linked executable: a container's own
// root has no loader or libc for it.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("incus: the init binary %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("incus: %s is dynamically linked (built with cgo), so containers cannot run it as their init: build cornus with CGO_ENABLED=0 or point %s at a static build: %w",
				path, EnvInitBinary, errdefs.ErrFailedPrecondition)
		}
	}
	return nil
}
