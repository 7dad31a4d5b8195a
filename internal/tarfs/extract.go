package tarfs

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/containerd/errdefs"
)

// Options shape an extraction.
type Options struct {
	// Limit bounds the bytes read from the stream (0: none).
	Limit int64
	// Rename maps each entry's cleaned relative name to the name it gets;
	// "" skips the entry. nil keeps names.
	Rename func(name string) string
	// Owners gives each entry its header's owner (cp -a; needs root).
	Owners bool
	// What names the tree in errors: "a path outside the context".
	What string
}

// ErrTooLarge is the error of a stream past Options.Limit.
var ErrTooLarge = errors.New("the archive is larger than its limit")

// Extract writes the tar stream r into dir.
func Extract(r io.Reader, dir string, o Options) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if o.Limit > 0 {
		r = &limitReader{r: r, left: o.Limit}
	}
	if o.What == "" {
		o.What = "directory"
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := extractEntry(root, tr, hdr, o); err != nil {
			return fmt.Errorf("%s: %w", hdr.Name, err)
		}
	}
}

// limitReader fails with ErrTooLarge once more than left bytes came.
type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, fmt.Errorf("%w: %w", ErrTooLarge, errdefs.ErrOutOfRange)
	}
	return n, err
}

func extractEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, o Options) error {
	name := path.Clean(strings.TrimPrefix(hdr.Name, "/"))
	if name == "." || name == ".." || strings.HasPrefix(name, "../") {
		if hdr.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("a path outside the %s: %w", o.What, errdefs.ErrInvalidArgument)
	}
	if o.Rename != nil {
		if name = o.Rename(name); name == "" {
			return nil
		}
	}
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := fs.FileMode(hdr.Mode) & fs.ModePerm
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := root.Mkdir(name, mode|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	case tar.TypeReg:
		if err := writeFile(root, name, tr, mode); err != nil {
			return err
		}
	case tar.TypeSymlink:
		// Kept as a link: the os.Root refuses to follow it out of dir.
		_ = root.Remove(name) // as tar does: the entry replaces a file
		if err := root.Symlink(hdr.Linkname, name); err != nil {
			return err
		}
	case tar.TypeLink:
		target := path.Clean(strings.TrimPrefix(hdr.Linkname, "/"))
		if o.Rename != nil {
			target = o.Rename(target)
		}
		_ = root.Remove(name)
		if err := root.Link(target, name); err != nil {
			return err
		}
	case tar.TypeXGlobalHeader:
		return nil
	default:
		return fmt.Errorf("entry type %q is not allowed in a %s: %w", hdr.Typeflag, o.What, errdefs.ErrInvalidArgument)
	}
	return finish(root, name, hdr, o)
}

func writeFile(root *os.Root, name string, r io.Reader, mode fs.FileMode) error {
	f, err := root.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode|0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// finish gives an entry its owner (with o.Owners), mode and times.
func finish(root *os.Root, name string, hdr *tar.Header, o Options) error {
	if o.Owners {
		if err := root.Lchown(name, hdr.Uid, hdr.Gid); err != nil {
			return err
		}
	}
	if hdr.Typeflag != tar.TypeReg && hdr.Typeflag != tar.TypeDir {
		return nil
	}
	if o.Owners {
		// A chown clears set-id bits; the mode is the header's.
		if err := root.Chmod(name, fs.FileMode(hdr.Mode)&fs.ModePerm); err != nil {
			return err
		}
	}
	return root.Chtimes(name, hdr.AccessTime, hdr.ModTime)
}
