package bare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/prepare"
)

// Create prepares everything a container needs — its root filesystem,
// volumes, files, its network namespace attached to its networks, hosts
// and resolv.conf — and writes its runtime bundle (config.json), its
// container.json and its monitor record. On any failure what was prepared
// is undone.
func (b *Backend) Create(ctx context.Context, cs backends.ContainerSpec) (_ backends.Container, err error) {
	if err := localstore.ValidName(cs.Name); err != nil {
		return backends.Container{}, fmt.Errorf("create container: %w", err)
	}
	if other, err := b.store().ByName(ctx, cs.Name); err == nil {
		return backends.Container{}, fmt.Errorf("create container %s: the name is already in use by container %s: %w", cs.Name, other, errdefs.ErrConflict)
	}
	img, err := b.images.get(ctx, cs.Image)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	layers, err := b.snap.unpack(ctx, img)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}

	id := newID()
	dir := b.cfg.containerDir(id)
	release, err := b.halfMade().Lock(id)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	defer release()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
			_ = unmount(b.cfg.rootfsDir(id))
			_ = os.RemoveAll(dir)
		}
	}()
	st := stored{ID: id, Name: cs.Name, Spec: cs, ImageID: img.configID.String(), Layers: layers, Created: now()}
	hostname := firstNonEmpty(cs.Hostname, id[:12])
	if err := b.snap.prepare(layers, b.cfg.rootfsDir(id), b.cfg.upperDir(id), b.cfg.workDir(id)); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}

	host := b.prepareHost()
	mounts, err := host.Mounts(id, cs, &undo)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	st.Mounts, st.Anonymous = mounts.Points, mounts.Anonymous
	fileMounts, err := prepare.Files(dir, cs.Files)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	in := ocispec.Input{Spec: cs, Image: img.config.Config, Backend: Name, RootFS: b.cfg.rootfsDir(id),
		Hostname: hostname, Mounts: append(mounts.Specs, fileMounts...), InitBin: ocispec.FindInit()}
	nw, err := host.Network(ctx, prepare.NetworkInput{ID: id, Dir: dir, Spec: cs, Hostname: hostname, Peer: b.peerNetwork}, &undo)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	st.Netns, st.Networks, st.Ports = nw.Netns, nw.Networks, nw.Ports
	in.Netns, in.HostsPath, in.ResolvConf = nw.Netns, nw.HostsPath, nw.ResolvConf
	if in.PIDNS, err = b.sharedNamespace(cs.PID, "pid"); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: pidMode: %w", cs.Name, err)
	}
	if in.IPCNS, err = b.sharedNamespace(cs.IPC, "ipc"); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: ipcMode: %w", cs.Name, err)
	}
	sp, err := generateSpec(ctx, id, in)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := localstore.WriteJSON(filepath.Join(b.cfg.bundleDir(id), "config.json"), sp); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := b.seedVolumes(id, cs, st.Mounts); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := b.store().Write(st); err != nil {
		return backends.Container{}, err
	}
	if err := b.records.Write(b.newRecord(st)); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	b.event("create", st)
	return b.store().View(st, b.store().RecordOf(id)), nil
}

func newID() string {
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}

// newRecord is the monitor record of a created container.
func (b *Backend) newRecord(st stored) monitor.Record {
	return prepare.Record(st.ID, st.Name, st.Spec, b.cfg.logMaxBytes, b.cfg.eventsDir())
}

// prepareHost is what backends/internal/prepare needs of this backend.
func (b *Backend) prepareHost() prepare.Host {
	return prepare.Host{Backend: Name, Volumes: b.vols, Networks: b.nets, CNI: b.net}
}

// peerNetwork is the network namespace and directory of the container a
// networkMode container:<ref> names.
func (b *Backend) peerNetwork(ctx context.Context, ref string) (string, string, error) {
	other, err := b.store().Read(b.store().ResolveID(ctx, ref))
	if err != nil {
		return "", "", err
	}
	return other.Netns, b.cfg.containerDir(other.ID), nil
}

// sharedNamespace is the namespace path of a container shared with.
func (b *Backend) sharedNamespace(m backends.NamespaceMode, kind string) (string, error) {
	if m.Kind != "container" {
		return "", nil
	}
	rec, err := b.records.Read(b.store().ResolveID(context.Background(), m.Container))
	if err != nil || rec.State.Pid == 0 {
		return "", fmt.Errorf("container %s is not running: %w", m.Container, errdefs.ErrFailedPrecondition)
	}
	return fmt.Sprintf("/proc/%d/ns/%s", rec.State.Pid, kind), nil
}
