package bare

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/prepare"
	"github.com/cornus-dev/cornus/backends/internal/records"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// Build resolves the image of a create from the store, its layers
// unpacked; the container's root is an overlay of them (or a copy) in
// its bundle, and the container is the bundle's config.json.
func (d driver) Build(ctx context.Context, cs backends.ContainerSpec) (daemonless.Build, error) {
	b := d.b
	img, err := b.images.get(ctx, cs.Image)
	if err != nil {
		return daemonless.Build{}, err
	}
	layers, err := b.snap.unpack(ctx, img)
	if err != nil {
		return daemonless.Build{}, err
	}
	return daemonless.Build{ImageID: img.configID.String(), Image: img.config.Config,
		Root: func(id string, undo *[]func()) (string, []string, error) {
			*undo = append(*undo, func() { _ = unmount(b.cfg.rootfsDir(id)) })
			return b.cfg.rootfsDir(id), layers, b.snap.prepare(layers, b.cfg.rootfsDir(id), b.cfg.upperDir(id), b.cfg.workDir(id))
		},
		Make: d.make}, nil
}

// make writes the runtime bundle's config.json and seeds the volumes.
func (d driver) make(ctx context.Context, st records.Container, in ocispec.Input, _ *[]func()) error {
	sp, err := generateSpec(ctx, st.ID, in)
	if err != nil {
		return err
	}
	if err := localstore.WriteJSON(filepath.Join(d.b.cfg.bundleDir(st.ID), "config.json"), sp); err != nil {
		return err
	}
	return d.seedVolumes(st)
}

// seedVolumes copies what the image holds at a volume's target into the
// volume when it is empty (Docker's copy-up), unless noCopy. The
// container's root is mounted (or copied) by now.
func (d driver) seedVolumes(st records.Container) error {
	root := d.b.cfg.rootfsDir(st.ID)
	for _, m := range prepare.SeedCandidates(st.Spec, st.Mounts) {
		// Resolved inside the root, so a link in the image cannot point
		// the copy at the host.
		r, err := rootfs.Open(root)
		if err != nil {
			return fmt.Errorf("seed volumes: %w", err)
		}
		fi, err := r.Lstat(m.Destination)
		r.Close()
		if err != nil || !fi.Mode.IsDir() {
			continue
		}
		src := filepath.Join(root, filepath.Clean("/"+m.Destination))
		if real, err := filepath.EvalSymlinks(src); err != nil || real != src {
			continue // a link on the way: not seeded
		}
		if err := prepare.CopyTree(src, m.Source); err != nil {
			return fmt.Errorf("seed volume %s from the image's %s: %w", m.Name, m.Destination, err)
		}
	}
	return nil
}
