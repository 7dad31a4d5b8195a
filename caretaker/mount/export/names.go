//go:build linux

package export

import (
	"strings"

	"golang.org/x/sys/unix"
)

// maxName is the longest directory entry name Linux accepts.
const maxName = 255

// checkName accepts exactly one path component: never empty, "." or "..",
// never containing '/' or NUL, at most 255 bytes. Every name that reaches
// a syscall passes here first (the p9 server checks too; this does not
// rely on it).
func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return unix.EINVAL
	case len(name) > maxName:
		return unix.ENAMETOOLONG
	case strings.ContainsAny(name, "/\x00"):
		return unix.EINVAL
	}
	return nil
}

// checkTarget accepts a symlink target: stored as data and never followed
// by the export, so any non-empty string without NUL that fits PATH_MAX.
func checkTarget(target string) error {
	switch {
	case target == "", strings.IndexByte(target, 0) >= 0:
		return unix.EINVAL
	case len(target) >= unix.PathMax:
		return unix.ENAMETOOLONG
	}
	return nil
}
