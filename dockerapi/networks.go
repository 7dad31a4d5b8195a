package dockerapi

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// networkNames maps every way a client may name a network (name, ID, short
// ID) to its runtime name.
func (s *Server) networkNames(ctx context.Context) (map[string]string, error) {
	nets, err := s.networkStore().ListNetworks(ctx, backends.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range nets {
		out[n.Name] = n.Name
		out[n.ID] = n.Name
		if len(n.ID) > 12 {
			out[n.ID[:12]] = n.Name
		}
	}
	return out, nil
}

// network resolves a reference (name, ID or ID prefix).
func (s *Server) network(ctx context.Context, ref string) (backends.Network, error) {
	nets, err := s.networkStore().ListNetworks(ctx, backends.ListOptions{})
	if err != nil {
		return backends.Network{}, err
	}
	var prefix []backends.Network
	for _, n := range nets {
		if n.ID == ref || n.Name == ref {
			return n, nil
		}
		if strings.HasPrefix(n.ID, ref) {
			prefix = append(prefix, n)
		}
	}
	if len(prefix) == 1 {
		return prefix[0], nil
	}
	return backends.Network{}, fmt.Errorf("network %s not found: %w", ref, errdefs.ErrNotFound)
}

func networkInspect(n backends.Network) network.Inspect {
	out := network.Inspect{
		Network: network.Network{
			Name: n.Name, ID: n.ID, Created: n.Created, Scope: "local", Driver: n.Driver, EnableIPv4: true,
			EnableIPv6: n.IPv6, Internal: n.Internal, Labels: n.Labels, Options: map[string]string{},
			IPAM: network.IPAM{Driver: "default", Options: map[string]string{}, Config: []network.IPAMConfig{}},
		},
		Containers: map[string]network.EndpointResource{},
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for _, sn := range n.Subnets {
		c := network.IPAMConfig{}
		c.Subnet, _ = netip.ParsePrefix(sn.Subnet)
		c.IPRange, _ = netip.ParsePrefix(sn.IPRange)
		c.Gateway, _ = netip.ParseAddr(sn.Gateway)
		out.IPAM.Config = append(out.IPAM.Config, c)
	}
	for id, ep := range n.Containers {
		r := network.EndpointResource{Name: ep.NetworkID}
		if a, err := netip.ParseAddr(ep.IPAddress); err == nil {
			r.IPv4Address = netip.PrefixFrom(a, ep.IPPrefixLen)
		}
		out.Containers[id] = r
	}
	return out
}

func (s *Server) networkList(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilters(r.URL.Query().Get("filters"))
	if err != nil {
		writeError(w, err)
		return
	}
	nets, err := s.networkStore().ListNetworks(r.Context(), backends.ListOptions{Labels: f.labels()})
	if err != nil {
		writeError(w, err)
		return
	}
	out := []network.Summary{}
	for _, n := range nets {
		if !filterMatch(f["name"], func(v string) bool { return strings.Contains(n.Name, v) }) ||
			!filterMatch(f["id"], func(v string) bool { return strings.HasPrefix(n.ID, v) }) ||
			!filterMatch(f["driver"], func(v string) bool { return v == n.Driver }) {
			continue
		}
		out = append(out, network.Summary{Network: networkInspect(n).Network})
	}
	writeJSON(w, http.StatusOK, out)
}

// filterMatch is true when no values are given or one matches.
func filterMatch(vals []string, pred func(string) bool) bool {
	return len(vals) == 0 || anyMatch(vals, pred)
}

func (s *Server) networkInspect(w http.ResponseWriter, r *http.Request) {
	n, err := s.network(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, networkInspect(n))
}

func (s *Server) networkCreate(w http.ResponseWriter, r *http.Request) {
	var req network.CreateRequest
	if err := decodeJSON(w, r, maxSmallBody, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Name == "" {
		writeError(w, invalidParam("network name is required"))
		return
	}
	if _, err := s.network(r.Context(), req.Name); err == nil {
		writeError(w, fmt.Errorf("network with name %s already exists: %w", req.Name, errdefs.ErrConflict))
		return
	}
	n := spec.Network{Name: req.Name, Driver: req.Driver, DriverOpts: req.Options, Internal: req.Internal, Attachable: req.Attachable, Labels: req.Labels}
	if req.EnableIPv6 != nil {
		n.IPv6 = *req.EnableIPv6
	}
	if req.IPAM != nil {
		for _, c := range req.IPAM.Config {
			sn := spec.Subnet{}
			if c.Subnet.IsValid() {
				sn.Subnet = c.Subnet.String()
			}
			if c.Gateway.IsValid() {
				sn.Gateway = c.Gateway.String()
			}
			if c.IPRange.IsValid() {
				sn.IPRange = c.IPRange.String()
			}
			n.Subnets = append(n.Subnets, sn)
		}
	}
	key := req.Labels[backends.ComposeNetwork]
	if key == "" {
		key = req.Name
	}
	created, err := s.networkStore().EnsureNetwork(r.Context(), backends.NetworkSpec{Project: req.Labels[backends.ComposeProject], Key: key, Network: n, Labels: req.Labels})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, network.CreateResponse{ID: created.ID})
}

func (s *Server) networkDelete(w http.ResponseWriter, r *http.Request) {
	n, err := s.network(r.Context(), r.PathValue("id"))
	if err == nil {
		err = s.networkStore().RemoveNetwork(r.Context(), n.ID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) connector(w http.ResponseWriter) (backends.NetworkConnector, bool) {
	return want[backends.NetworkConnector](s, w, backends.FeatureConnect, "connecting running containers to networks")
}

func (s *Server) networkConnect(w http.ResponseWriter, r *http.Request) {
	var req network.ConnectRequest
	s.connection(w, r, &req, &req.Container, func(ctx context.Context, conn backends.NetworkConnector, netID, id string) error {
		var aliases []string
		if req.EndpointConfig != nil {
			aliases = req.EndpointConfig.Aliases
		}
		return conn.Connect(ctx, netID, id, aliases)
	})
}

func (s *Server) networkDisconnect(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Container string
		Force     bool
	}
	s.connection(w, r, &req, &req.Container, func(ctx context.Context, conn backends.NetworkConnector, netID, id string) error {
		return conn.Disconnect(ctx, netID, id, req.Force)
	})
}

// connection decodes a connect/disconnect body into req, resolves the
// network and the container it names, runs op, drops cached reads and
// answers 200 or the error.
func (s *Server) connection(w http.ResponseWriter, r *http.Request, req any, container *string, op func(context.Context, backends.NetworkConnector, string, string) error) {
	conn, ok := s.connector(w)
	if !ok {
		return
	}
	if err := decodeJSON(w, r, maxSmallBody, req); err != nil {
		writeError(w, err)
		return
	}
	n, err := s.network(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := s.container(r.Context(), *container)
	if err != nil {
		writeError(w, err)
		return
	}
	err = op(r.Context(), conn, n.ID, c.ID)
	s.cache.invalidateID(c.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
