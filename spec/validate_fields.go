package spec

import (
	"fmt"
	"strconv"
	"strings"
)

func validateHealthcheck(at string, h *Healthcheck, ps *Problems) {
	if h == nil {
		return
	}
	if len(h.Test) > 0 {
		switch h.Test[0] {
		case "NONE":
		case "CMD", "CMD-SHELL":
			if len(h.Test) < 2 {
				ps.add(at+".test", "%s needs a command after it", h.Test[0])
			}
		default:
			ps.add(at+".test", "must start with CMD, CMD-SHELL or NONE (got %q)", h.Test[0])
		}
	}
	// No test keeps the image's own, with the timings given here.
	for _, d := range []struct {
		name string
		v    *Duration
	}{{"interval", h.Interval}, {"timeout", h.Timeout}, {"startPeriod", h.StartPeriod}, {"startInterval", h.StartInterval}} {
		if d.v != nil && *d.v < 0 {
			ps.add(at+"."+d.name, "must not be negative")
		}
	}
	if h.Retries != nil && *h.Retries < 0 {
		ps.add(at+".retries", "must be 0 or more")
	}
}

func validateHooks(at string, h *Hooks, ps *Problems) {
	if h == nil {
		return
	}
	for _, set := range []struct {
		name  string
		hooks []Hook
	}{{"postCreate", h.PostCreate}, {"postStart", h.PostStart}, {"postAttach", h.PostAttach}, {"preStop", h.PreStop}} {
		for i, hk := range set.hooks {
			if len(hk.Command) == 0 {
				ps.add(fmt.Sprintf("%s.%s[%d].command", at, set.name, i), "required: the command to run")
			}
		}
	}
}

func validateResources(at string, r *Resources, ps *Problems) {
	if r == nil {
		return
	}
	for _, side := range []struct {
		name string
		l    *ResourceLimits
	}{{"limits", r.Limits}, {"reservations", r.Reservations}} {
		if side.l == nil {
			continue
		}
		if side.l.CPUs < 0 {
			ps.add(at+"."+side.name+".cpus", "must not be negative")
		}
		if side.l.Memory < 0 {
			ps.add(at+"."+side.name+".memory", "must not be negative")
		}
		if side.l.Pids < 0 {
			ps.add(at+"."+side.name+".pids", "must not be negative")
		}
	}
	if r.Limits != nil && r.Reservations != nil && r.Limits.Memory > 0 && r.Reservations.Memory > r.Limits.Memory {
		ps.add(at+".reservations.memory", "%s exceeds the limit %s", r.Reservations.Memory, r.Limits.Memory)
	}
}

func validateFileMounts(at string, fs []FileMount, ps *Problems) {
	for i, f := range fs {
		fp := fmt.Sprintf("%s[%d]", at, i)
		if f.Name == "" {
			ps.add(fp+".name", "required")
		}
		sources := 0
		for _, s := range []string{f.File, f.Environment, f.Content} {
			if s != "" {
				sources++
			}
		}
		if sources != 1 && !(sources == 0 && f.Value != nil) {
			ps.add(fp, "set exactly one of file, environment or content")
		}
		for _, id := range []struct{ name, v string }{{"uid", f.UID}, {"gid", f.GID}} {
			if id.v != "" {
				if _, err := strconv.ParseUint(id.v, 10, 32); err != nil {
					ps.add(fp+"."+id.name, "%q is not a numeric id", id.v)
				}
			}
		}
	}
}

func (e *Egress) validate(at string, ps *Problems) {
	if e == nil {
		return
	}
	switch e.Mode {
	case "", EgressEnv, EgressProxy, EgressTransparent:
	default:
		ps.add(at+".mode", "%q is not one of env, proxy, transparent", e.Mode)
	}
	validRoute := func(r string) bool {
		switch r {
		case RouteClient, RouteGateway, RouteCluster, RouteDeny:
			return true
		}
		return false
	}
	for i, r := range e.Rules {
		rp := fmt.Sprintf("%s.rules[%d]", at, i)
		if strings.TrimSpace(r.Pattern) == "" {
			ps.add(rp+".pattern", "required: a host glob, CIDR or host:port")
		}
		if !validRoute(r.Route) {
			if strings.Contains(r.Route, ":") {
				ps.add(rp+".route", "%q: a route is client, gateway, cluster or deny; the gateway itself is set up on the server (CORNUS_EGRESS_GATEWAY=1), never by URL", r.Route)
			} else {
				ps.add(rp+".route", "%q is not one of client, gateway, cluster, deny", r.Route)
			}
		}
	}
	if e.Default != "" && !validRoute(e.Default) {
		ps.add(at+".default", "%q is not one of client, gateway, cluster, deny", e.Default)
	}
}
