package bare

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/testimage"
)

// layerTar is one uncompressed layer: name → content ("" for a directory,
// whiteouts by name).
func layerTar(t *testing.T, entries [][2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e[1]))}
		if e[0][len(e[0])-1] == '/' {
			h = &tar.Header{Name: e[0], Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	return b.Bytes()
}

// whiteoutArchive is a docker-archive of two layers: the second deletes a
// file of the first (.wh.) and makes a directory opaque (.wh..wh..opq).
func whiteoutArchive(t *testing.T, ref string) []byte {
	t.Helper()
	l1 := layerTar(t, [][2]string{{"a/", ""}, {"a/gone", "1"}, {"a/kept", "2"}, {"d/", ""}, {"d/old", "3"}})
	l2 := layerTar(t, [][2]string{{"a/", ""}, {"a/.wh.gone", ""}, {"d/", ""}, {"d/.wh..wh..opq", ""}, {"d/new", "4"}})
	diff := func(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }
	cfg, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Cmd": []string{"/bin/true"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diff(l1), diff(l2)}},
	})
	mf, _ := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{ref}, "Layers": []string{"l1.tar", "l2.tar"}}})
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range []struct {
		name string
		data []byte
	}{{"l1.tar", l1}, {"l2.tar", l2}, {"config.json", cfg}, {"manifest.json", mf}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	return b.Bytes()
}

// Layers unpack with whiteouts honored, through an overlay mount and
// through the native copy alike (issue 14: images).
func TestUnpackWhiteouts(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the bare backend's tests need root under CI (mounts)")
		}
		t.Skip("needs root (mounts); run the bare backend's tests as root")
	}
	for _, kind := range []string{SnapshotterOverlay, SnapshotterNative} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			store, err := openImageStore(filepath.Join(dir, "images"))
			if err != nil {
				t.Fatal(err)
			}
			names, err := store.importTar(ctx, bytes.NewReader(whiteoutArchive(t, "cornus-test/whiteout:1")))
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != 1 || names[0] != "docker.io/cornus-test/whiteout:1" {
				t.Fatalf("names %v", names)
			}
			r, err := store.get(ctx, "cornus-test/whiteout:1")
			if err != nil {
				t.Fatal(err)
			}
			snap := &snapshotter{kind: kind, dir: filepath.Join(dir, "layers"), content: store.content}
			keys, err := snap.unpack(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "c", "rootfs")
			if err := snap.prepare(keys, root, filepath.Join(dir, "c", "upper"), filepath.Join(dir, "c", "work")); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = unmount(root) })
			for path, want := range map[string]string{"a/kept": "2", "d/new": "4", "a/gone": "", "d/old": ""} {
				got, err := os.ReadFile(filepath.Join(root, path))
				switch {
				case want == "" && !os.IsNotExist(err):
					t.Errorf("%s: whited out, but reads %q (%v)", path, got, err)
				case want != "" && string(got) != want:
					t.Errorf("%s = %q (%v), want %q", path, got, err, want)
				}
			}
			// A second unpack finds the layers ready; collect keeps them
			// while named and removes them after.
			if _, err := snap.unpack(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := unmount(root); err != nil {
				t.Fatal(err)
			}
			if err := snap.collect(map[string]bool{}); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(snap.dir); len(left) != 0 {
				t.Fatalf("layers left after collect: %d", len(left))
			}
		})
	}
}

// With CORNUS_BARE_SNAPSHOTTER=native a container runs on its own copy of
// the image (no overlay mount), writes stay in it, and remove leaves
// nothing (issue 14: native copy fallback).
func TestNativeSnapshotterContainer(t *testing.T) {
	b := newTestBackend(t, EnvSnapshotter+"="+SnapshotterNative)
	ctx := context.Background()
	var buf bytes.Buffer
	if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: drillImage}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadImage(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	c, err := b.Create(ctx, backends.ContainerSpec{Name: "native", Image: drillImage, Network: backends.NetworkMode{Kind: "none"},
		Command: []string{"sh", "-c", "echo native > /written; trap 'exit 0' TERM; while true; do sleep 0.1; done"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true}) })
	if mounted(b.cfg.rootfsDir(c.ID)) {
		t.Fatal("a native root is a mount")
	}
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for range 50 {
		out.Reset()
		if code, err := b.Exec(ctx, c.ID, backends.ExecOptions{Cmd: []string{"cat", "/written"}, Stdout: &out, Stderr: &out}); err == nil && code == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out.String() != "native\n" {
		t.Fatalf("exec: %q", out.String())
	}
	if got, _ := os.ReadFile(filepath.Join(b.cfg.rootfsDir(c.ID), "written")); string(got) != "native\n" {
		t.Fatalf("the write is not in the container's own copy: %q", got)
	}
	if err := b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b.cfg.ContainerDir(c.ID)); !os.IsNotExist(err) {
		t.Fatalf("container directory left: %v", err)
	}
}
