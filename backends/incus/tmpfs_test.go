package incus

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

func TestTmpfsOptions(t *testing.T) {
	for _, c := range []struct {
		o     string
		flags uintptr
		data  string
		bad   bool
	}{
		{"", unix.MS_NOSUID | unix.MS_NODEV, "", false},
		{"size=1m,mode=0750,uid=1000", unix.MS_NOSUID | unix.MS_NODEV, "size=1m,mode=0750,uid=1000", false},
		{"ro,noexec,nosuid,size=4k", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_RDONLY | unix.MS_NOEXEC, "size=4k", false},
		{"suid,dev", unix.MS_NOSUID | unix.MS_NODEV, "", false}, // never either
		{"size=1m,remount", 0, "", true},
		{"context=system_u:object_r:tmp_t", 0, "", true},
	} {
		flags, data, ok, err := tmpfsOptions(map[string]string{"type": "tmpfs", "device": "tmpfs", "o": c.o})
		if !ok || (err != nil) != c.bad || (!c.bad && (flags != c.flags || data != c.data)) {
			t.Errorf("o=%q: got %#x %q %v %v, want %#x %q (bad %v)", c.o, flags, data, ok, err, c.flags, c.data, c.bad)
		}
		if c.bad && !errdefs.IsInvalidArgument(err) {
			t.Errorf("o=%q: want InvalidArgument, got %v", c.o, err)
		}
	}
	if _, _, ok, _ := tmpfsOptions(map[string]string{"type": "none", "o": "bind", "device": "/srv"}); ok {
		t.Error("a bind read as a tmpfs")
	}
}

// TestTmpfsVolume: a tmpfs volume lives in memory on incusd's host, is
// mounted again where its tmpfs went (a reboot) before anything uses it,
// and leaves nothing mounted once removed. Fails if the volume were the
// pool's directory on disk.
func TestTmpfsVolume(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vs := backends.VolumeSpec{Project: "tmpfsvol-" + randomSuffix(), Key: "mem",
		Volume: spec.Volume{DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m,mode=0750"}}}
	v, err := b.EnsureVolume(ctx, vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.RemoveVolume(context.Background(), v.Name, true) })
	inMemory := func(when string) {
		t.Helper()
		var fs unix.Statfs_t
		if err := unix.Statfs(v.Mountpoint, &fs); err != nil || !onTmpfs(v.Mountpoint) {
			t.Fatalf("%s: %s is not a tmpfs (statfs %v)", when, v.Mountpoint, err)
		}
		if size := fs.Blocks * uint64(fs.Bsize); size != 1<<20 {
			t.Errorf("%s: %d bytes, want the 1 MiB asked for", when, size)
		}
		if fi, err := os.Stat(v.Mountpoint); err != nil || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: mode %v (%v), want 0750", when, fi.Mode(), err)
		}
	}
	inMemory("made")
	if err := os.WriteFile(filepath.Join(v.Mountpoint, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Unmount(v.Mountpoint, 0); err != nil { // as after a reboot
		t.Fatal(err)
	}
	if _, err := b.EnsureVolume(ctx, vs); err != nil {
		t.Fatal(err)
	}
	inMemory("ensured again")
	if err := b.RemoveVolume(ctx, v.Name, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(v.Mountpoint); !os.IsNotExist(err) {
		t.Errorf("removed, yet %s: %v", v.Mountpoint, err)
	}
}
