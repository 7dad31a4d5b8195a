package containerd

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	runcoptions "github.com/containerd/containerd/api/types/runc/options"
	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/mount"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/daemonless"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/prepare"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// Labels cornus keeps on containerd containers besides the spec's.
const labelName = "cornus.name"

// Build resolves the image of a create (unpacked for the snapshotter);
// the container is a containerd container with a new snapshot of it.
func (d driver) Build(ctx context.Context, cs backends.ContainerSpec) (daemonless.Build, error) {
	ctx = d.b.ns(ctx)
	name, err := daemonless.Normalize(cs.Image)
	if err != nil {
		return daemonless.Build{}, err
	}
	img, err := d.b.cli.GetImage(ctx, name)
	if err != nil {
		return daemonless.Build{}, fmt.Errorf("image %s: %w", cs.Image, err)
	}
	if err := d.b.unpack(ctx, img); err != nil {
		return daemonless.Build{}, err
	}
	imgSpec, err := img.Spec(ctx)
	if err != nil {
		return daemonless.Build{}, err
	}
	cfgDesc, _ := img.Config(ctx)
	return daemonless.Build{ImageID: cfgDesc.Digest.String(), Image: imgSpec.Config,
		Make: func(ctx context.Context, st records.Container, in ocispec.Input, undo *[]func()) error {
			return d.make(ctx, img, st, in, undo)
		}}, nil
}

// make creates the containerd container and seeds its volumes.
func (d driver) make(ctx context.Context, img client.Image, st records.Container, in ocispec.Input, undo *[]func()) error {
	ctx = d.b.ns(ctx)
	opts, err := ocispec.Opts(in)
	if err != nil {
		return err
	}
	labels := map[string]string{labelName: st.Name}
	maps.Copy(labels, st.Spec.Labels)
	ctr, err := d.b.cli.NewContainer(ctx, st.ID,
		client.WithImage(img), client.WithSnapshotter(d.b.cfg.snapshotter), client.WithNewSnapshot(st.ID, img),
		client.WithRuntime(runtimeName, &runcoptions.Options{Root: d.b.cfg.runcRoot()}),
		client.WithNewSpec(opts...), client.WithContainerLabels(labels))
	if err != nil {
		return err
	}
	*undo = append(*undo, func() { _ = ctr.Delete(context.WithoutCancel(ctx), client.WithSnapshotCleanup) })
	return d.seedVolumes(ctx, st)
}

// seedVolumes copies what the image holds at a volume's target into the
// volume when it is empty (Docker's copy-up), unless noCopy.
func (d driver) seedVolumes(ctx context.Context, st records.Container) error {
	todo := prepare.SeedCandidates(st.Spec, st.Mounts)
	if len(todo) == 0 {
		return nil
	}
	ms, err := d.b.cli.SnapshotService(d.b.cfg.snapshotter).Mounts(ctx, st.ID)
	if err != nil {
		return fmt.Errorf("seed volumes: %w", err)
	}
	return mount.WithReadonlyTempMount(ctx, ms, func(root string) error {
		for _, m := range todo {
			src := filepath.Join(root, filepath.Clean("/"+m.Destination))
			if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
				continue
			}
			if err := prepare.CopyTree(src, m.Source); err != nil {
				return fmt.Errorf("seed volume %s from the image's %s: %w", m.Name, m.Destination, err)
			}
		}
		return nil
	})
}
