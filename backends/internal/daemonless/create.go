package daemonless

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/prepare"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// Create prepares everything a container needs — its image (the
// runtime's Build), root filesystem, volumes, files, its network
// namespace attached to its networks, hosts and resolv.conf — has the
// runtime make the container, and writes its container.json and its
// monitor record. On any failure what was prepared is undone.
func (c *Core) Create(ctx context.Context, cs backends.ContainerSpec) (_ backends.Container, err error) {
	if err := localstore.ValidName(cs.Name); err != nil {
		return backends.Container{}, fmt.Errorf("create container: %w", err)
	}
	if other, err := c.Store().ByName(ctx, cs.Name); err == nil {
		return backends.Container{}, fmt.Errorf("create container %s: the name is already in use by container %s: %w", cs.Name, other, errdefs.ErrConflict)
	}
	build, err := c.rt.Build(ctx, cs)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	id := newID()
	dir := c.Cfg.ContainerDir(id)
	release, err := c.halfMade().Lock(id)
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
			_ = os.RemoveAll(dir)
		}
	}()
	st := records.Container{ID: id, Name: cs.Name, Spec: cs, ImageID: build.ImageID, Created: time.Now().UTC()}
	in, err := c.hostSide(ctx, &st, build, &undo)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := build.Make(ctx, st, in, &undo); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := c.Store().Write(st); err != nil {
		return backends.Container{}, err
	}
	if err := c.Records.Write(c.newRecord(st)); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	c.Event("create", st)
	return c.Store().View(st, c.Store().RecordOf(id)), nil
}

// hostSide makes the container's root (Build.Root), mounts, files and
// network namespace, records them in st, and returns the OCI spec's
// input.
func (c *Core) hostSide(ctx context.Context, st *records.Container, build Build, undo *[]func()) (ocispec.Input, error) {
	id, cs := st.ID, st.Spec
	hostname := cmp.Or(cs.Hostname, id[:12])
	in := ocispec.Input{Spec: cs, Image: build.Image, Backend: c.Cfg.Name, Hostname: hostname, InitBin: ocispec.FindInit()}
	if build.Root != nil {
		root, layers, err := build.Root(id, undo)
		if err != nil {
			return in, err
		}
		in.RootFS, st.Layers = root, layers
	}
	host := c.PrepareHost()
	mounts, err := host.Mounts(id, cs, undo)
	if err != nil {
		return in, err
	}
	st.Mounts, st.Anonymous = mounts.Points, mounts.Anonymous
	fileMounts, err := prepare.Files(c.Cfg.ContainerDir(id), cs.Files)
	if err != nil {
		return in, err
	}
	in.Mounts = slices.Concat(mounts.Specs, fileMounts)
	nw, err := host.Network(ctx, c.NetworkInput(*st), undo)
	if err != nil {
		return in, err
	}
	st.Netns, st.Networks, st.Ports = nw.Netns, nw.Networks, nw.Ports
	in.Netns, in.HostsPath, in.ResolvConf = nw.Netns, nw.HostsPath, nw.ResolvConf
	if in.PIDNS, err = c.sharedNamespace(cs.PID, "pid"); err != nil {
		return in, fmt.Errorf("pidMode: %w", err)
	}
	if in.IPCNS, err = c.sharedNamespace(cs.IPC, "ipc"); err != nil {
		return in, fmt.Errorf("ipcMode: %w", err)
	}
	return in, nil
}

// PrepareHost is what backends/internal/prepare needs of this backend.
func (c *Core) PrepareHost() prepare.Host {
	return prepare.Host{Backend: c.Cfg.Name, Volumes: c.vols, Networks: c.nets, CNI: c.Net}
}

// NetworkInput is what prepare.Host.Network makes st's network
// namespace from (at create, and again after a host reboot).
func (c *Core) NetworkInput(st records.Container) prepare.NetworkInput {
	return prepare.NetworkInput{ID: st.ID, Dir: c.Cfg.ContainerDir(st.ID), Spec: st.Spec,
		Hostname: cmp.Or(st.Spec.Hostname, st.ID[:12]), Peer: c.peerNetwork}
}

// peerNetwork is the network namespace and directory of the container a
// networkMode container:<ref> names.
func (c *Core) peerNetwork(ctx context.Context, ref string) (string, string, error) {
	other, err := c.Store().Read(c.Store().ResolveID(ctx, ref))
	if err != nil {
		return "", "", err
	}
	return other.Netns, c.Cfg.ContainerDir(other.ID), nil
}

// sharedNamespace is the namespace path of a container shared with.
func (c *Core) sharedNamespace(m backends.NamespaceMode, kind string) (string, error) {
	if m.Kind != "container" {
		return "", nil
	}
	rec, err := c.Records.Read(c.Store().ResolveID(context.Background(), m.Container))
	if err != nil || rec.State.Pid == 0 {
		return "", fmt.Errorf("container %s is not running: %w", m.Container, errdefs.ErrFailedPrecondition)
	}
	return fmt.Sprintf("/proc/%d/ns/%s", rec.State.Pid, kind), nil
}

func newID() string {
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}

// newRecord is the monitor record of a created container.
func (c *Core) newRecord(st records.Container) monitor.Record {
	return prepare.Record(st.ID, st.Name, st.Spec, c.Cfg.LogMaxBytes, c.Cfg.EventsDir())
}
