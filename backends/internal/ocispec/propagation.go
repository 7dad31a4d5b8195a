package ocispec

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	"golang.org/x/sys/unix"
)

// Mount propagation of binds, as Docker does it: a bind with shared
// propagation (a caretaker companion's volume, where it mounts what must
// show in its app) needs its source on a shared mount of this host, and
// the container's root propagation follows the binds (runc makes it
// rslave by default, which would cut a shared bind off this host).

// rootPropagation is the rootfs propagation the binds need ("" runc's
// default).
func rootPropagation(binds []string) string {
	out := ""
	for _, p := range binds {
		switch strings.TrimPrefix(p, "r") {
		case "shared":
			return "rshared"
		case "slave":
			out = "rslave"
		}
	}
	return out
}

func withRootPropagation(p string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux != nil {
			s.Linux.RootfsPropagation = p
		}
		return nil
	}
}

// EnsureShared makes source's mount shared: if the mount holding it is
// not, source becomes a bind mount of itself, shared (RemoveVolume
// detaches it with what is below).
func EnsureShared(source string) error {
	abs, err := filepath.EvalSymlinks(source)
	if err != nil {
		return fmt.Errorf("bind %s: %w", source, err)
	}
	target, shared, err := mountOf(abs)
	if err != nil {
		return fmt.Errorf("bind %s: %w", source, err)
	}
	if shared {
		return nil
	}
	if target != abs {
		if err := unix.Mount(abs, abs, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s: make it a mount for shared propagation: %w", source, err)
		}
	}
	if err := unix.Mount("", abs, "", unix.MS_SHARED, ""); err != nil {
		return fmt.Errorf("bind %s: make its mount shared: %w", source, err)
	}
	return nil
}

// mountOf finds the mount holding path (the longest mount point above
// it) and whether it is shared.
func mountOf(path string) (string, bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	best, shared := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 7 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if !(path == mp || mp == "/" || strings.HasPrefix(path, mp+"/")) || len(mp) < len(best) {
			continue
		}
		best, shared = mp, false
		for _, opt := range fields[6:] {
			if opt == "-" {
				break
			}
			if strings.HasPrefix(opt, "shared:") {
				shared = true
			}
		}
	}
	return best, shared, sc.Err()
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
