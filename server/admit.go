package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/spec"
)

// Admission: every spec a client sends is checked here before the
// engine sees it, whatever the verb (up, down, start, stop, restart, kill,
// rm, warnings). A tenant's spec may take nothing from this host beyond
// what its policy allows, and may name only its own things:
//   - no file or environment of the server: secrets' and configs' content
//     comes inline from the client, which read its own files;
//   - no label that only cornus sets;
//   - namespaces (network_mode, pid, ipc) of its own project's services,
//     or of containers of its own projects;
//   - volumes and networks that are new, or its own projects';
//   - images that are its own or the operator's, never cornus's own.

// reservedLabelPrefixes are the labels cornus sets and reads back
// (ownership, project membership, companions, mounts): a client's spec
// that set one could pass its container off as another project's.
var reservedLabelPrefixes = []string{"cornus.", "dev.cornus.", "com.docker.compose.", "cornus.dev/", "net.cornus.dev/"}

// admission is one spec's check for one tenant.
type admission struct {
	ctx    context.Context
	tenant string
	p      spec.Project
}

// admit refuses what tenant's spec p may not do (see above); it returns
// p with each container it names by name or prefix named by its ID (a
// name could be another's by the time the runtime resolves it).
func (s *Server) admit(ctx context.Context, tenant string, p spec.Project) (spec.Project, error) {
	if err := s.hostPolicy.Check(p); err != nil {
		return p, err
	}
	r := &admission{ctx: ctx, tenant: tenant, p: p}
	for _, check := range []func(*admission) error{s.admitFiles, admitLabels, s.admitNamespaces, s.admitStorage, s.admitImages} {
		if err := check(r); err != nil {
			return p, err
		}
	}
	return r.p, nil
}

// admitFiles refuses secrets and configs the server would read from its
// own disk or environment: the tokens file is one path away.
func (s *Server) admitFiles(r *admission) error {
	for _, name := range r.p.ServiceNames() {
		a := r.p.Services[name]
		for _, set := range []struct {
			kind string
			fms  []spec.FileMount
		}{{"secrets", a.Secrets}, {"configs", a.Configs}} {
			for i, fm := range set.fms {
				at := fmt.Sprintf("services.%s.%s[%d]", name, set.kind, i)
				switch {
				case fm.File != "":
					return fmt.Errorf("%w: %s (%s): file %s: the server never reads its own files for a client; send the content (cornus's client inlines files it reads on your machine)", errdefs.ErrInvalidArgument, at, fm.Name, fm.File)
				case fm.Environment != "":
					return fmt.Errorf("%w: %s (%s): environment %s: the server never reads its own environment for a client; send the value as content", errdefs.ErrInvalidArgument, at, fm.Name, fm.Environment)
				}
			}
		}
	}
	return nil
}

func admitLabels(r *admission) error {
	check := func(at string, labels map[string]string) error {
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			for _, pre := range reservedLabelPrefixes {
				if strings.HasPrefix(k, pre) {
					return fmt.Errorf("%w: %s.labels.%s: labels starting with %s are cornus's own", errdefs.ErrInvalidArgument, at, k, pre)
				}
			}
		}
		return nil
	}
	for _, name := range r.p.ServiceNames() {
		if err := check("services."+name, r.p.Services[name].Labels); err != nil {
			return err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(r.p.Volumes)) {
		if err := check("volumes."+key, r.p.Volumes[key].Labels); err != nil {
			return err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(r.p.Networks)) {
		if err := check("networks."+key, r.p.Networks[key].Labels); err != nil {
			return err
		}
	}
	return nil
}

// admitNamespaces lets a service share namespaces only within the
// tenant's own projects, and join no network but its project's.
func (s *Server) admitNamespaces(r *admission) error {
	for _, name := range r.p.ServiceNames() {
		a := r.p.Services[name]
		for _, ns := range []struct {
			field string
			mode  *string
		}{{"networkMode", &a.NetworkMode}, {"pidMode", &a.PidMode}, {"ipcMode", &a.IpcMode}} {
			at := "services." + name + "." + ns.field
			ref, isContainer := strings.CutPrefix(*ns.mode, "container:")
			switch {
			case isContainer:
				id, err := s.ownContainer(r, at, ref)
				if err != nil {
					return err
				}
				*ns.mode = "container:" + id
				r.p.Services = maps.Clone(r.p.Services)
				r.p.Services[name] = a
			case *ns.mode == "", *ns.mode == "host", *ns.mode == "none", strings.HasPrefix(*ns.mode, "service:"):
				// host is the policy's (host power); service: is this project.
			case ns.field == "networkMode":
				return fmt.Errorf("%w: %s: %q: through the server a service joins its project's networks (networks:), another of its services (service:NAME) or none", errdefs.ErrPermissionDenied, at, *ns.mode)
			}
		}
	}
	return nil
}

// ownContainer is the ID of container ref, if it is in one of tenant's
// projects.
func (s *Server) ownContainer(r *admission, at, ref string) (string, error) {
	cs, err := s.b.List(r.ctx, backends.ListOptions{All: true})
	if err != nil {
		return "", fmt.Errorf("%s: %w", at, err)
	}
	for _, c := range cs {
		if c.Name == ref || c.ID == ref || (len(ref) >= 12 && strings.HasPrefix(c.ID, ref)) {
			if p := c.Labels[backends.ComposeProject]; p != "" && s.owners.owns(r.tenant, p) {
				return c.ID, nil
			}
			break
		}
	}
	return "", fmt.Errorf("%w: %s: container %s is not in one of your projects", errdefs.ErrPermissionDenied, at, ref)
}

// admitStorage: every named volume a service mounts is declared (so the
// engine labels it with its project when it makes it), and every declared
// volume or network that exists already is one of the tenant's
// projects'. An unlabelled one (made by hand, or by the operator) is not.
func (s *Server) admitStorage(r *admission) error {
	for _, name := range r.p.ServiceNames() {
		for i, v := range r.p.Services[name].Volumes {
			if _, ok := r.p.Volumes[v.Source]; v.Source != "" && !ok {
				return fmt.Errorf("%w: services.%s.volumes[%d].source: volume %q is not declared under volumes: declare it (external: true for one of your other projects')", errdefs.ErrInvalidArgument, name, i, v.Source)
			}
		}
	}
	if len(r.p.Volumes) > 0 {
		vols, err := s.b.ListVolumes(r.ctx, backends.ListOptions{})
		if err != nil {
			return fmt.Errorf("list volumes: %w", err)
		}
		for _, key := range slices.Sorted(maps.Keys(r.p.Volumes)) {
			rt := backends.RuntimeName(r.p.Name, key, r.p.Volumes[key].Name)
			i := slices.IndexFunc(vols, func(v backends.Volume) bool { return v.Name == rt })
			if err := s.ownExisting(r, "volumes."+key, "volume "+rt, r.p.Volumes[key].External, i >= 0, func() map[string]string { return vols[i].Labels }); err != nil {
				return err
			}
		}
	}
	if len(r.p.Networks) == 0 {
		return nil
	}
	netw, err := backends.Want[backends.Networks](s.b, backends.FeatureNetworks, "networks")
	if err != nil {
		return nil // the runtime networks its containers itself
	}
	nets, err := netw.ListNetworks(r.ctx, backends.ListOptions{})
	if err != nil {
		return fmt.Errorf("list networks: %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(r.p.Networks)) {
		rt := backends.RuntimeName(r.p.Name, key, r.p.Networks[key].Name)
		i := slices.IndexFunc(nets, func(n backends.Network) bool { return n.Name == rt })
		if err := s.ownExisting(r, "networks."+key, "network "+rt, r.p.Networks[key].External, i >= 0, func() map[string]string { return nets[i].Labels }); err != nil {
			return err
		}
	}
	return nil
}

// ownExisting refuses an existing volume or network that is not of one
// of tenant's projects, and an external one the server cannot find by
// its name (it could not tell whose it is).
func (s *Server) ownExisting(r *admission, at, what string, external, exists bool, labels func() map[string]string) error {
	switch {
	case !exists && external:
		return fmt.Errorf("%w: %s: external %s is not one of your projects' (no such name here)", errdefs.ErrPermissionDenied, at, what)
	case !exists:
		return nil // the engine makes it, labelled with this project
	}
	if p := labels()[backends.ComposeProject]; p != "" && s.owners.owns(r.tenant, p) {
		return nil
	}
	return fmt.Errorf("%w: %s: %s exists and is not one of your projects'", errdefs.ErrPermissionDenied, at, what)
}

func (s *Server) admitImages(r *admission) error {
	for _, name := range r.p.ServiceNames() {
		if err := s.checkImageRef(r, "services."+name+".image", r.p.Services[name].Image); err != nil {
			return err
		}
	}
	return nil
}

// checkClientRoutes refuses, before anything is created, egress that
// may route to the client when nothing could carry it: the companion
// relays through the server's advertise URL, and the client's session
// must outlive nothing (a detached one, or none, cannot carry it).
func (s *Server) checkClientRoutes(p spec.Project, sess *session) error {
	routed, err := egress.Routed(p, egress.Client)
	if err != nil || len(routed) == 0 {
		return err
	}
	return s.needClient(sess, strings.Join(routed, ", "), "may route egress to the client (x-cornus-egress route client, or a PAC script)")
}

// needClient refuses what services need of their client at run time
// (what they do, for the message): their caretakers reach it through this
// server, which needs a URL they can dial, and the client serves it over
// a deploy-attach session that is not detached.
func (s *Server) needClient(sess *session, services, what string) error {
	switch {
	case s.cfg.AdvertiseURL == "":
		return fmt.Errorf("%w: services %s %s: their caretakers reach the client through this server, which has no advertise URL they can dial (--advertise-url or %s on the server)",
			errdefs.ErrFailedPrecondition, services, what, EnvAdvertiseURL)
	case sess == nil:
		return fmt.Errorf("%w: services %s %s, which the client serves over its deploy-attach session, and this request holds none (compose up and cornus deploy do; compose run does not yet)",
			errdefs.ErrFailedPrecondition, services, what)
	case sess.detach:
		return fmt.Errorf("%w: services %s %s, which the client serves over its deploy-attach session: deploy with a session that is not detached (drop --detach)",
			errdefs.ErrFailedPrecondition, services, what)
	}
	return nil
}
