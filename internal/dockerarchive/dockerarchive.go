// Package dockerarchive writes single-layer images as docker-archive tars
// (what `docker save` writes and every backend's image load reads), so
// cornus can make images with no registry and no builder: the test
// images and the caretaker's agent image.
package dockerarchive

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// Image describes the one-layer image Write puts in the archive.
type Image struct {
	Ref        string   // e.g. cornus-test/busybox:1
	Entrypoint []string // default none
	Cmd        []string // default ["sh"] when Entrypoint is unset too
	Env        []string // nil: a standard PATH; empty (non-nil): none, as `docker import` makes
	WorkingDir string   // default /
	OnBuild    []string // ONBUILD triggers; default none
}

// Epoch is the timestamp of everything in the archive: the same input
// makes the same bytes (and the same image ID).
var Epoch = time.Unix(0, 0).UTC()

// ImageID is the ID (config digest) the image Write makes has on every
// runtime that names images by their config.
func ImageID(o Image, layer []byte) (string, error) {
	_, chex, _, err := config(o, layer)
	return "sha256:" + chex, err
}

// config is the image's config JSON, its digest and its layer's digest.
func config(o Image, layer []byte) (cfg []byte, chex, lhex string, err error) {
	lsum := sha256.Sum256(layer)
	lhex = hex.EncodeToString(lsum[:])
	cmd := o.Cmd
	if cmd == nil && o.Entrypoint == nil {
		cmd = []string{"sh"}
	}
	env := o.Env
	if env == nil {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	wd := o.WorkingDir
	if wd == "" {
		wd = "/"
	}
	c := map[string]any{"Entrypoint": o.Entrypoint, "Cmd": cmd, "Env": env, "WorkingDir": wd}
	if len(o.OnBuild) > 0 { // absent otherwise: the same image ID as before the field
		c["OnBuild"] = o.OnBuild
	}
	cfg, err = json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      Epoch.Format(time.RFC3339),
		"config":       c,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + lhex}},
		"history":      []map[string]any{{"created": Epoch.Format(time.RFC3339), "created_by": "cornus"}},
	})
	csum := sha256.Sum256(cfg)
	return cfg, hex.EncodeToString(csum[:]), lhex, err
}

// Write writes a docker-archive of img with layer (a tar) to w.
func Write(w io.Writer, o Image, layer []byte) error {
	cfg, chex, lhex, err := config(o, layer)
	if err != nil {
		return err
	}
	manifest, err := json.Marshal([]map[string]any{{
		"Config": chex + ".json", "RepoTags": []string{o.Ref}, "Layers": []string{lhex + "/layer.tar"},
	}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, f := range []struct {
		name string
		data []byte
	}{{"manifest.json", manifest}, {chex + ".json", cfg}, {lhex + "/layer.tar", layer}} {
		if strings.Contains(f.name, "/") {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: lhex + "/", Mode: 0o755, ModTime: Epoch}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: Epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}
