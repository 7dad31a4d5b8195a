package hostlock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDefaultDir: the lock directory is one fixed place per user and
// never follows TMPDIR (two runs with different TMPDIRs must meet).
func TestDefaultDir(t *testing.T) {
	cases := []struct {
		env  []string
		euid int
		want string
	}{
		{[]string{"TMPDIR=/a", "XDG_RUNTIME_DIR=/run/user/0"}, 0, "/run/cornus/locks"},
		{[]string{"TMPDIR=/a", "XDG_RUNTIME_DIR=/run/user/1000"}, 1000, "/run/user/1000/cornus/locks"},
		{[]string{"TMPDIR=/b", "XDG_RUNTIME_DIR=/run/user/1000"}, 1000, "/run/user/1000/cornus/locks"},
		{[]string{"TMPDIR=/b"}, 1000, "/tmp/cornus-1000/locks"},
		{[]string{"XDG_RUNTIME_DIR=relative"}, 1000, "/tmp/cornus-1000/locks"},
	}
	for _, c := range cases {
		if got := DefaultDir(c.env, c.euid); got != c.want {
			t.Errorf("DefaultDir(%q, %d) = %s, want %s", c.env, c.euid, got, c.want)
		}
	}
}

// TestLockUnlinkedFile: a file opened before its holder unlinked it is no
// lock even once flocked — the classic race of removing lock files.
func TestLockUnlinkedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder, err := tryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	_ = os.Remove(path)
	_ = holder.Close()
	if err := lockOpened(waiter, path); !errors.Is(err, errUnlinked) {
		t.Fatalf("lock on the unlinked file: %v, want errUnlinked", err)
	}
}
