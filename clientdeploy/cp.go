package clientdeploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/tarfs"
)

// MaxCopy bounds a compose cp's archive either way, as the server bounds
// what it is sent.
const MaxCopy = 8 << 30

// CopyOptions are compose cp's.
type CopyOptions struct {
	engine.CopyOptions           // the service and replica
	Archive            bool      // -a: keep owners
	FollowLink         bool      // -L: copy what a symlink source names
	Stdin              io.Reader // SRC "-": a tar
	Stdout             io.Writer // DEST "-": the tar
}

// CopyFromService copies src of the service's container to the local
// dest as docker cp does: into dest when it is a directory, as dest
// otherwise; "src/." copies a directory's content; dest "-" writes the
// tar to Stdout. Nothing is written outside dest's directory.
func CopyFromService(ctx context.Context, eng Engine, project string, o CopyOptions, src, dest string) error {
	contents := strings.HasSuffix(src, "/.")
	if contents {
		src = path.Clean(strings.TrimSuffix(src, "."))
	}
	rc, st, err := eng.CopyFrom(ctx, project, o.CopyOptions, src)
	if err == nil && o.FollowLink && fs.FileMode(st.Mode)&fs.ModeSymlink != 0 {
		rc.Close()
		target := st.LinkTarget
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(src), target)
		}
		rc, st, err = eng.CopyFrom(ctx, project, o.CopyOptions, target)
		src = target
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	if dest == "-" {
		_, err := io.Copy(o.Stdout, rc)
		return err
	}
	srcDir := fs.FileMode(st.Mode).IsDir()
	if contents && !srcDir {
		return fmt.Errorf("%s:%s/. is not a directory: only a directory's content can be copied", o.Service, src)
	}
	root := path.Base(src)
	into, newRoot, err := localDest(dest, root, srcDir, contents)
	if err != nil {
		return err
	}
	var outside []string
	rename := func(name string) string {
		switch {
		case name == root:
			return newRoot
		case strings.HasPrefix(name, root+"/"):
			return path.Join(newRoot, strings.TrimPrefix(name, root+"/"))
		}
		outside = append(outside, name)
		return ""
	}
	err = tarfs.Extract(rc, into, tarfs.Options{Limit: MaxCopy, Rename: rename, Owners: o.Archive, What: "copy"})
	if err == nil && len(outside) > 0 {
		err = fmt.Errorf("the archive of %s holds %d entries outside it (%s): not copied", src, len(outside), outside[0])
	}
	if err != nil {
		return fmt.Errorf("copy %s:%s to %s: %w", o.Service, src, dest, err)
	}
	return nil
}

// localDest is where a copy to the local dest extracts (into) and the
// name the source's root entry (root) gets there ("": its content goes
// straight into into).
func localDest(dest, root string, srcDir, contents bool) (into, newRoot string, err error) {
	fi, err := os.Stat(dest)
	switch {
	case err == nil && fi.IsDir():
		if contents {
			return dest, "", nil
		}
		return dest, root, nil
	case err == nil:
		if srcDir {
			return "", "", fmt.Errorf("cannot copy a directory to a file: %s", dest)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", err
	case strings.HasSuffix(dest, string(filepath.Separator)) && !srcDir:
		return "", "", fmt.Errorf("destination directory %s does not exist", dest)
	}
	parent := filepath.Dir(filepath.Clean(dest))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("the destination's directory %s does not exist", parent)
	}
	return parent, filepath.Base(filepath.Clean(dest)), nil
}

// CopyToService copies the local src into the service's containers (each
// replica, or o.Index's) as docker cp does: into dest when it is a
// directory there, as dest otherwise; "src/." copies a directory's
// content; src "-" extracts a tar from Stdin into the directory dest.
func CopyToService(ctx context.Context, eng Engine, project string, o CopyOptions, src, dest string) error {
	if src == "-" {
		return copyStdinTo(ctx, eng, project, o, dest)
	}
	contents := strings.HasSuffix(src, string(filepath.Separator)+".")
	stat := os.Lstat
	if o.FollowLink {
		stat = os.Stat
	}
	fi, err := stat(src)
	if err != nil {
		return err
	}
	if contents && !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: only a directory's content can be copied", src)
	}
	dir, root, err := serviceDest(ctx, eng, project, o, dest, fi.IsDir())
	if err != nil {
		return err
	}
	if root == "" && !contents {
		root = filepath.Base(filepath.Clean(src))
	}
	open := func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			pw.CloseWithError(tarfs.Write(pw, src, root, tarfs.WriteOptions{FollowLink: o.FollowLink, Owners: o.Archive}))
		}()
		return pr, nil
	}
	if err := eng.CopyTo(ctx, project, o.CopyOptions, dir, open); err != nil {
		return fmt.Errorf("copy %s to %s:%s: %w", src, o.Service, dest, err)
	}
	return nil
}

// serviceDest is the directory of the service's container a copy to dest
// extracts in, and the name the source's root gets there ("": its own,
// or with src/., none).
func serviceDest(ctx context.Context, eng Engine, project string, o CopyOptions, dest string, srcDir bool) (dir, root string, err error) {
	st, err := eng.StatPath(ctx, project, o.CopyOptions, dest)
	switch {
	case err == nil && fs.FileMode(st.Mode).IsDir():
		return dest, "", nil
	case err == nil && srcDir:
		return "", "", fmt.Errorf("cannot copy a directory to a file: %s:%s", o.Service, dest)
	case err != nil && !errdefs.IsNotFound(err):
		return "", "", err
	case err != nil && strings.HasSuffix(dest, "/") && !srcDir:
		return "", "", fmt.Errorf("destination directory %s:%s does not exist", o.Service, dest)
	}
	clean := path.Clean(dest)
	return path.Dir(clean), path.Base(clean), nil
}

// copyStdinTo extracts the tar on Stdin into the directory dest of the
// service's containers; it is spooled (at most MaxCopy bytes) so that
// each replica gets it.
func copyStdinTo(ctx context.Context, eng Engine, project string, o CopyOptions, dest string) error {
	st, err := eng.StatPath(ctx, project, o.CopyOptions, dest)
	if err != nil {
		return err
	}
	if !fs.FileMode(st.Mode).IsDir() {
		return fmt.Errorf("destination %s:%s must be a directory when copying from stdin", o.Service, dest)
	}
	f, err := os.CreateTemp("", "cornus-cp-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := io.Copy(f, io.LimitReader(o.Stdin, MaxCopy+1))
	if err != nil {
		return err
	}
	if n > MaxCopy {
		return fmt.Errorf("the archive on stdin is larger than %d bytes", int64(MaxCopy))
	}
	open := func() (io.ReadCloser, error) { return os.Open(f.Name()) }
	return eng.CopyTo(ctx, project, o.CopyOptions, dest, open)
}
