package export

import (
	"runtime"
	"strings"

	"github.com/hugelgupf/p9/linux"
)

const (
	// maxName is the longest directory entry name Linux accepts.
	maxName = 255
	// pathMax is Linux's PATH_MAX, the longest symlink target stored.
	pathMax = 4096
)

// windowsNames: on Windows the export also refuses what NTFS cannot hold
// or would store under another name.
var windowsNames = runtime.GOOS == "windows"

// checkName accepts exactly one path component: never empty, "." or "..",
// never containing '/' or NUL, at most 255 bytes (and, exporting from
// Windows, a name Windows keeps as given: checkWindowsName). Every name
// that reaches a syscall passes here first (the p9 server checks too; this
// does not rely on it).
func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return linux.EINVAL
	case len(name) > maxName:
		return linux.ENAMETOOLONG
	case strings.ContainsAny(name, "/\x00"):
		return linux.EINVAL
	}
	if windowsNames {
		return checkWindowsName(name)
	}
	return nil
}

// checkWindowsName refuses the names Windows cannot create or would alias:
// the characters < > : " \ | ? * and controls (':' would open an NTFS
// alternate data stream), a trailing dot or space (Windows strips them, so
// "a." would name "a"), and the reserved device names (CON, PRN, AUX, NUL,
// COM0-9, LPT0-9 and their superscript forms) with or without an extension
// ("nul.txt" is the device too).
func checkWindowsName(name string) error {
	for _, r := range name {
		if r < 0x20 || strings.ContainsRune(`<>:"\|?*`, r) {
			return linux.EINVAL
		}
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return linux.EINVAL
	}
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return linux.EINVAL
	}
	if len(stem) >= 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) {
		switch stem[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return linux.EINVAL
		}
	}
	return nil
}

// checkTarget accepts a symlink target: stored as data and never followed
// by the export, so any non-empty string without NUL that fits PATH_MAX.
func checkTarget(target string) error {
	switch {
	case target == "", strings.IndexByte(target, 0) >= 0:
		return linux.EINVAL
	case len(target) >= pathMax:
		return linux.ENAMETOOLONG
	}
	return nil
}
