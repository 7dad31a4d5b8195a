package prepare

import (
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cornus-dev/cornus/backends"
)

// SeedCandidates are the volume mounts to seed from the image (Docker's
// copy-up): a volume that is empty, unless its mount says noCopy or takes
// a subpath. Where the image's content comes from (a snapshot mounted
// read-only, the container's root) is the backend's; CopyTree copies it.
func SeedCandidates(cs backends.ContainerSpec, mounts []backends.MountPoint) []backends.MountPoint {
	var todo []backends.MountPoint
	for i, m := range mounts {
		if m.Type != "volume" {
			continue
		}
		if v := volumeMountFor(cs, m.Destination); v != nil && (v.NoCopy || v.Subpath != "") {
			continue
		}
		if empty, _ := isEmptyDir(m.Source); empty {
			todo = append(todo, mounts[i])
		}
	}
	return todo
}

func volumeMountFor(cs backends.ContainerSpec, target string) *backends.VolumeMount {
	for i := range cs.Volumes {
		if cs.Volumes[i].Target == target {
			return &cs.Volumes[i]
		}
	}
	return nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil, nil
}

// CopyTree copies a directory tree, keeping modes, owners and links.
func CopyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil && !os.IsExist(err) {
				return err
			}
		case fi.IsDir():
			if err := os.MkdirAll(target, fi.Mode().Perm()); err != nil {
				return err
			}
			_ = os.Chmod(target, fi.Mode().Perm())
		case fi.Mode().IsRegular():
			if err := copyFile(p, target, fi.Mode().Perm()); err != nil {
				return err
			}
		default:
			return nil // devices, sockets: not seeded
		}
		if st != nil {
			_ = os.Lchown(target, int(st.Uid), int(st.Gid))
		}
		return nil
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
