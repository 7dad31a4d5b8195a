package caretaker

import (
	"context"
	"fmt"
	"strconv"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/spec"
)

// besideOpts make the shared volume of a companion beside its app
// (backends.SiblingCompanions) a tmpfs volume: nothing the companion
// mounts reaches the app, so the credentials' files it writes there must
// be in memory already (and its sockets need no disk).
var besideOpts = map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=16m,mode=0755"}

// sharedVolume is the volume a's replica's companion shares with it,
// made if missing.
func (c *Companions) sharedVolume(ctx context.Context, p spec.Project, a spec.App, replica int) (backends.Volume, error) {
	vs := backends.VolumeSpec{Project: p.Name, Key: "cornus-caretaker-" + a.Name + "-" + strconv.Itoa(replica),
		Labels: map[string]string{LabelSharedVolume: a.Name}}
	if c.Sibling {
		vs.Volume.DriverOpts = besideOpts
	}
	v, err := c.Backend.EnsureVolume(ctx, vs)
	switch {
	case err != nil:
		return v, fmt.Errorf("services.%s: the caretaker's shared volume: %w", a.Name, err)
	case v.Labels[backends.ComposeProject] != p.Name || v.Labels[LabelSharedVolume] != a.Name:
		// A volume of that name made by someone else (runtimes that find
		// volumes by name hand it back): never shared, nor removed.
		return v, fmt.Errorf("services.%s: the caretaker's shared volume %s exists and is not this replica's: remove it: %w", a.Name, v.Name, errdefs.ErrConflict)
	case c.Sibling && len(a.Credentials) > 0 && hostpolicy.LocalDriverMount(v.Options).Kind != hostpolicy.MountTmpfs:
		// One an earlier cornus made on disk: credentials never go there.
		return v, fmt.Errorf("services.%s: the caretaker's shared volume %s is on disk, not in memory, and would hold credentials: remove it (down): %w", a.Name, v.Name, errdefs.ErrFailedPrecondition)
	case v.Mountpoint == "":
		_ = c.Backend.RemoveVolume(context.WithoutCancel(ctx), v.Name, true)
		return v, fmt.Errorf("services.%s: the %s backend does not say where volume %s is: a caretaker cannot share it", a.Name, c.Backend.Name(), v.Name)
	}
	return v, nil
}

// refuseBeside refuses, for a sibling companion, a client-local mount of
// its own: its mounts cannot reach the app (on such a backend the server
// mounts them: companionMounts).
func refuseBeside(backend string, a spec.App, mounts []AppMount) error {
	if len(mounts) == 0 {
		return nil
	}
	return fmt.Errorf("services.%s: client-local mount at %s: in the %s backend's remote mode the caretaker runs beside the app, not in its namespaces, and its mounts cannot reach the app: %w",
		a.Name, mounts[0].Target, backend, errdefs.ErrNotImplemented)
}
