package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// A project belongs to the tenant that first deployed it through this
// server, and to no one else, for as long as anything of it is left on
// the backend (containers, volumes, networks): a down that keeps volumes
// keeps the owner, so no other tenant can take the name and its data.
// The server keeps the owners in projects.json, never in labels a
// workload's creator could write. Projects nobody deployed through the
// server (the local CLI's, docker compose's) belong to no tenant and are
// invisible to tenants until an operator adopts them.

// owner is one project's owner and its live deployment generation.
type owner struct {
	Tenant string `json:"tenant"`
	// Epoch names the current deployment generation ("" after a down):
	// caretaker tokens are bound to it.
	Epoch string `json:"epoch,omitempty"`
}

type owners struct {
	path string
	mu   sync.Mutex
	by   map[string]owner
}

// notYours is the refusal of a project the tenant does not own, the same
// whether another tenant owns it or nobody does.
func notYours(project string) error {
	return fmt.Errorf("%w: project %s is not yours: it belongs to another tenant, or was not deployed through this server (an operator can adopt it: cornus project adopt)", errdefs.ErrPermissionDenied, project)
}

func loadOwners(path string) (*owners, bool, error) {
	o := &owners{path: path, by: map[string]owner{}}
	data, err := boundedfile.Read(path, boundedfile.ServerState)
	if errors.Is(err, os.ErrNotExist) {
		return o, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("project owners: %w", err)
	}
	if err := json.Unmarshal(data, &o.by); err != nil {
		return nil, false, fmt.Errorf("project owners %s: %w", path, err)
	}
	return o, true, nil
}

// seed makes the first owners file of a server that predates it: the
// projects its earlier versions deployed carry LabelTenant on their
// containers (the server always set it, over any a client sent).
func (o *owners) seed(ctx context.Context, b backends.Backend) (int, error) {
	cs, err := b.List(ctx, backends.ListOptions{All: true})
	if err != nil {
		return 0, fmt.Errorf("project owners: list containers: %w", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range cs {
		if t, p := c.Labels[LabelTenant], c.Labels[backends.ComposeProject]; t != "" && p != "" && validProject(p) == nil {
			if _, ok := o.by[p]; !ok {
				o.by[p] = owner{Tenant: t, Epoch: newEpoch()}
			}
		}
	}
	return len(o.by), o.saveLocked()
}

func newEpoch() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (o *owners) saveLocked() error { return writeFileAtomic(o.path, o.by) }

// get is project's owner record.
func (o *owners) get(project string) (owner, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.by[project]
	return r, ok
}

// owns reports whether tenant owns project.
func (o *owners) owns(tenant, project string) bool {
	r, ok := o.get(project)
	return ok && r.Tenant == tenant
}

// holds reports whether a caretaker grant is of project's live
// generation.
func (o *owners) holds(g grant) bool {
	r, ok := o.get(g.Project)
	return ok && r.Tenant == g.Tenant && r.Epoch != "" && r.Epoch == g.Epoch
}

// claim makes tenant project's owner for a deployment (up) and returns
// the deployment generation: the live one, or a new one. present says
// whether anything of the project is on the backend; an unowned project
// that exists is refused.
func (o *owners) claim(tenant, project string, present func() (bool, error)) (string, error) {
	if r, ok := o.get(project); ok {
		if r.Tenant != tenant {
			return "", notYours(project)
		}
	} else if exists, err := present(); err != nil {
		return "", err
	} else if exists {
		return "", notYours(project)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.by[project]
	switch {
	case ok && r.Tenant != tenant:
		return "", notYours(project) // claimed meanwhile
	case ok && r.Epoch != "":
		return r.Epoch, nil
	}
	r = owner{Tenant: tenant, Epoch: newEpoch()}
	o.by[project] = r
	return r.Epoch, o.saveLocked()
}

// adopt gives an unowned project to tenant (an operator's verb).
func (o *owners) adopt(tenant, project string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.by[project]; ok {
		return fmt.Errorf("%w: project %s already belongs to tenant %s", errdefs.ErrConflict, project, r.Tenant)
	}
	o.by[project] = owner{Tenant: tenant, Epoch: newEpoch()}
	return o.saveLocked()
}

// ended ends project's deployment generation (its caretaker tokens stop
// working) and, when nothing of it is left, forgets its owner.
func (o *owners) ended(project string, left bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.by[project]
	if !ok {
		return nil
	}
	if left {
		r.Epoch = ""
		o.by[project] = r
	} else {
		delete(o.by, project)
	}
	return o.saveLocked()
}

// release forgets project's owner if nothing of it is on the backend (a
// first up that failed before creating anything).
func (o *owners) release(project string, left bool) error {
	if left {
		return nil
	}
	return o.ended(project, false)
}

// squatted is the project, not tenant's, that name would pass as one of
// (its runtime names: <project>_<volume or network>,
// <project>-<service>-<n>), "" for none.
func (o *owners) squatted(tenant, name string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p, r := range o.by {
		if r.Tenant != tenant && (name == p || strings.HasPrefix(name, p+"_") || strings.HasPrefix(name, p+"-")) {
			return p
		}
	}
	return ""
}

// of lists tenant's projects, sorted.
func (o *owners) of(tenant string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, p := range slices.Sorted(maps.Keys(o.by)) {
		if o.by[p].Tenant == tenant {
			out = append(out, p)
		}
	}
	return out
}

// present reports whether anything of project is on the backend:
// containers, volumes or networks labelled with it.
func present(ctx context.Context, b backends.Backend, project string) (bool, error) {
	labels := map[string]string{backends.ComposeProject: project}
	cs, err := b.List(ctx, backends.ListOptions{Labels: labels, All: true})
	if err != nil || len(cs) > 0 {
		return len(cs) > 0, err
	}
	vs, err := b.ListVolumes(ctx, backends.ListOptions{Labels: labels})
	if err != nil || len(vs) > 0 {
		return len(vs) > 0, err
	}
	n, err := backends.Want[backends.Networks](b, backends.FeatureNetworks, "networks")
	if err != nil {
		return false, nil // the runtime networks its containers itself
	}
	ns, err := n.ListNetworks(ctx, backends.ListOptions{Labels: labels})
	return len(ns) > 0, err
}
