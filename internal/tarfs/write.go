package tarfs

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// WriteOptions shape an archive of a local path.
type WriteOptions struct {
	// FollowLink archives what a symlink at the path names, not the link.
	FollowLink bool
	// Owners keeps the entries' owners; else they are root's (docker cp
	// without -a).
	Owners bool
}

// Write archives src to w as a tar whose root entry is named root; with
// root "" a directory's entries go without it (docker cp SRC/.).
func Write(w io.Writer, src, root string, o WriteOptions) error {
	tw := tar.NewWriter(w)
	top, err := os.Lstat(src)
	if err == nil && o.FollowLink && top.Mode()&fs.ModeSymlink != 0 {
		top, err = os.Stat(src)
	}
	if err != nil {
		return err
	}
	if !top.IsDir() {
		if root == "" {
			return fmt.Errorf("%s is not a directory: only a directory's content can be copied", src)
		}
		if err := writeEntry(tw, src, root, top, o); err != nil {
			return err
		}
		return tw.Close()
	}
	// Walk from the resolved top: a followed link's target directory.
	if o.FollowLink {
		if src, err = filepath.EvalSymlinks(src); err != nil {
			return err
		}
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := path.Join(root, filepath.ToSlash(rel))
		if name == "." {
			return nil // the top of SRC/.
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return writeEntry(tw, p, name, fi, o)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, p, name string, fi fs.FileInfo, o WriteOptions) error {
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		var err error
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	hdr.Name = name
	if fi.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uname, hdr.Gname = "", ""
	if !o.Owners {
		hdr.Uid, hdr.Gid = 0, 0
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyN(tw, f, hdr.Size)
	return err
}

// WriteFiles archives local files (links kept as links) to w, each
// under its name in files (name → local path), in names' order.
func WriteFiles(w io.Writer, files map[string]string) error {
	tw := tar.NewWriter(w)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fi, err := os.Lstat(files[name])
		if err != nil {
			return err
		}
		if fi.IsDir() {
			continue
		}
		if err := writeEntry(tw, files[name], name, fi, WriteOptions{}); err != nil {
			return err
		}
	}
	return tw.Close()
}
