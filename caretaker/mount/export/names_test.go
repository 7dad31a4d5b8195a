package export

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/hugelgupf/p9/linux"
)

// Locks down issue 27's Windows file-name rules: what NTFS cannot hold or
// would store under another name is refused before any call.
func TestWindowsNames(t *testing.T) {
	bad := []string{"a:b", "a<b", "a>b", `a"b`, `a\b`, "a|b", "a?b", "a*b", "a\x01b", "a\tb",
		"trail.", "trail ", "CON", "con", "Con.txt", "nul.tar.gz", "AUX", "prn.md", "COM1", "com9.log", "LPT3",
		"COM¹", "lpt²", "CONIN$", "conout$", "NUL .txt"}
	for _, name := range bad {
		if err := checkWindowsName(name); !errors.Is(err, linux.EINVAL) {
			t.Errorf("checkWindowsName(%q) = %v, want EINVAL", name, err)
		}
	}
	good := []string{"a", "console", "CONFIG", "nul-thing", "COM10", "LPT", "com", ".env", "a.b.c", "café", "x y", "COMA"}
	for _, name := range good {
		if err := checkWindowsName(name); err != nil {
			t.Errorf("checkWindowsName(%q) = %v, want nil", name, err)
		}
	}
}

// Locks down issue 27's shown modes of a Windows file: all may use it, the
// read-only attribute alone takes the write bits.
func TestWindowsMode(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		dir  bool
		want uint32
	}{
		{0o666, false, 0o100777}, {0o444, false, 0o100555}, {0o777, true, 0o40777}, {0o555, true, 0o40777},
	} {
		m := osMode(c.in, c.dir)
		if got := uint32(windowsMode(m)); got != c.want {
			t.Errorf("windowsMode(%v) = %o, want %o", m, got, c.want)
		}
	}
}

func osMode(perm uint32, dir bool) fs.FileMode {
	m := fs.FileMode(perm)
	if dir {
		m |= fs.ModeDir
	}
	return m
}
