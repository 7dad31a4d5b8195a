package builder

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/containerd/errdefs"
)

// ExtractContext writes a build context sent as a tar (plain or gzip, as
// docker build sends it) into dir: directories, regular files, symlinks
// and hard links, all through an os.Root of dir, so no entry (and no link
// an earlier entry planted) reaches outside it. Devices, FIFOs and
// entries past maxTarContext bytes are refused.
func ExtractContext(r io.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("build context: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	tr := tar.NewReader(&io.LimitedReader{R: in, N: maxTarContext + 1})
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("build context: %w", err)
		}
		if err := extractEntry(root, tr, hdr); err != nil {
			return fmt.Errorf("build context: %s: %w", hdr.Name, err)
		}
	}
}

func extractEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header) error {
	name := path.Clean(strings.TrimPrefix(hdr.Name, "/"))
	if name == "." || name == ".." || strings.HasPrefix(name, "../") {
		if hdr.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("a path outside the context: %w", errdefs.ErrInvalidArgument)
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
		f, err := root.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	case tar.TypeSymlink:
		// Kept as a link: the build reads it as one, and the os.Root
		// refuses to follow it out of the context.
		if err := root.Symlink(hdr.Linkname, name); err != nil {
			return err
		}
	case tar.TypeLink:
		if err := root.Link(path.Clean(strings.TrimPrefix(hdr.Linkname, "/")), name); err != nil {
			return err
		}
	case tar.TypeXGlobalHeader:
	default:
		return fmt.Errorf("entry type %q is not allowed in a build context: %w", hdr.Typeflag, errdefs.ErrInvalidArgument)
	}
	if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeDir {
		return root.Chtimes(name, hdr.AccessTime, hdr.ModTime)
	}
	return nil
}
