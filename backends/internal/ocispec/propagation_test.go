package ocispec

import "testing"

// Issue 12: the rootfs propagation follows the binds (a shared bind needs
// rshared, as Docker does it), and mountinfo's escapes are undone.
func TestRootPropagation(t *testing.T) {
	for want, binds := range map[string][]string{
		"":        {"", "private"},
		"rslave":  {"", "rslave"},
		"rshared": {"rslave", "shared"},
	} {
		if got := rootPropagation(binds); got != want {
			t.Errorf("%v: %q, want %q", binds, got, want)
		}
	}
	if got := unescapeMountinfo(`/a\040b\011c`); got != "/a b\tc" {
		t.Errorf("unescape: %q", got)
	}
	if mp, _, err := mountOf("/proc/self"); err != nil || mp != "/proc" {
		t.Errorf("mountOf(/proc/self) = %q %v", mp, err)
	}
}
