package devcontainer

import (
	"fmt"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// runFlag maps one `docker run` flag of devcontainer.json's runArgs onto a
// Compose service attribute.
type runFlag struct {
	names []string // long name first, then short aliases
	value bool     // takes an argument
	apply func(svc map[string]any, v string) error
}

func appendTo(key string) func(map[string]any, string) error {
	return func(svc map[string]any, v string) error {
		l, _ := svc[key].([]any)
		svc[key] = append(l, v)
		return nil
	}
}

func setTo(key string) func(map[string]any, string) error {
	return func(svc map[string]any, v string) error { svc[key] = v; return nil }
}

func setTrue(key string) func(map[string]any, string) error {
	return func(svc map[string]any, _ string) error { svc[key] = true; return nil }
}

// putKV stores "K=V" (or "K" alone) into a mapping attribute.
func putKV(key string) func(map[string]any, string) error {
	return func(svc map[string]any, v string) error {
		m, _ := svc[key].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			m[k] = nil
		} else {
			m[k] = val
		}
		svc[key] = m
		return nil
	}
}

var runFlags = []runFlag{
	{names: []string{"cap-add"}, value: true, apply: appendTo("cap_add")},
	{names: []string{"cap-drop"}, value: true, apply: appendTo("cap_drop")},
	{names: []string{"security-opt"}, value: true, apply: appendTo("security_opt")},
	{names: []string{"privileged"}, apply: setTrue("privileged")},
	{names: []string{"init"}, apply: setTrue("init")},
	{names: []string{"read-only"}, apply: setTrue("read_only")},
	{names: []string{"tty", "t"}, apply: setTrue("tty")},
	{names: []string{"interactive", "i"}, apply: setTrue("stdin_open")},
	{names: []string{"env", "e"}, value: true, apply: putKV("environment")},
	{names: []string{"label", "l"}, value: true, apply: putKV("labels")},
	{names: []string{"sysctl"}, value: true, apply: putKV("sysctls")},
	{names: []string{"publish", "p"}, value: true, apply: appendTo("ports")},
	{names: []string{"expose"}, value: true, apply: appendTo("expose")},
	{names: []string{"volume", "v"}, value: true, apply: appendTo("volumes")},
	{names: []string{"mount"}, value: true, apply: func(svc map[string]any, v string) error {
		m, err := parseMountString(v)
		if err != nil {
			return err
		}
		vols, _ := svc["volumes"].([]any)
		svc["volumes"] = append(vols, m)
		return nil
	}},
	{names: []string{"tmpfs"}, value: true, apply: appendTo("tmpfs")},
	{names: []string{"device"}, value: true, apply: appendTo("devices")},
	{names: []string{"add-host"}, value: true, apply: appendTo("extra_hosts")},
	{names: []string{"dns"}, value: true, apply: appendTo("dns")},
	{names: []string{"dns-search"}, value: true, apply: appendTo("dns_search")},
	{names: []string{"dns-option", "dns-opt"}, value: true, apply: appendTo("dns_opt")},
	{names: []string{"group-add"}, value: true, apply: appendTo("group_add")},
	{names: []string{"network", "net"}, value: true, apply: func(svc map[string]any, v string) error {
		switch v {
		case "host", "none", "bridge":
			svc["network_mode"] = v
		default:
			if strings.HasPrefix(v, "container:") {
				svc["network_mode"] = v
				return nil
			}
			svc["networks"] = map[string]any{v: map[string]any{}}
		}
		return nil
	}},
	{names: []string{"name"}, value: true, apply: setTo("container_name")},
	{names: []string{"hostname", "h"}, value: true, apply: setTo("hostname")},
	{names: []string{"domainname"}, value: true, apply: setTo("domainname")},
	{names: []string{"user", "u"}, value: true, apply: setTo("user")},
	{names: []string{"workdir", "w"}, value: true, apply: setTo("working_dir")},
	{names: []string{"entrypoint"}, value: true, apply: func(svc map[string]any, v string) error {
		svc["entrypoint"] = []any{v}
		return nil
	}},
	{names: []string{"shm-size"}, value: true, apply: setTo("shm_size")},
	{names: []string{"memory", "m"}, value: true, apply: setTo("mem_limit")},
	{names: []string{"memory-reservation"}, value: true, apply: setTo("mem_reservation")},
	{names: []string{"cpus"}, value: true, apply: setTo("cpus")},
	{names: []string{"pids-limit"}, value: true, apply: setTo("pids_limit")},
	{names: []string{"ipc"}, value: true, apply: setTo("ipc")},
	{names: []string{"pid"}, value: true, apply: setTo("pid")},
	{names: []string{"platform"}, value: true, apply: setTo("platform")},
	{names: []string{"restart"}, value: true, apply: setTo("restart")},
	{names: []string{"stop-signal"}, value: true, apply: setTo("stop_signal")},
	{names: []string{"stop-timeout"}, value: true, apply: func(svc map[string]any, v string) error {
		svc["stop_grace_period"] = v + "s"
		return nil
	}},
	{names: []string{"ulimit"}, value: true, apply: func(svc map[string]any, v string) error {
		name, limits, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("--ulimit %q: expected NAME=SOFT[:HARD]", v)
		}
		soft, hard, hasHard := strings.Cut(limits, ":")
		if !hasHard {
			hard = soft
		}
		var s, h int
		if _, err := fmt.Sscan(soft, &s); err != nil {
			return fmt.Errorf("--ulimit %q: %q is not a number", v, soft)
		}
		if _, err := fmt.Sscan(hard, &h); err != nil {
			return fmt.Errorf("--ulimit %q: %q is not a number", v, hard)
		}
		m, _ := svc["ulimits"].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		m[name] = map[string]any{"soft": s, "hard": h}
		svc["ulimits"] = m
		return nil
	}},
	// Accepted because they mean nothing for a managed dev container.
	{names: []string{"rm"}, apply: func(map[string]any, string) error { return nil }},
	{names: []string{"detach", "d"}, apply: func(map[string]any, string) error { return nil }},
}

func lookupFlag(flags []runFlag, name string) (runFlag, bool) {
	for _, f := range flags {
		for _, n := range f.names {
			if n == name {
				return f, true
			}
		}
	}
	return runFlag{}, false
}

// applyRunArgs applies `docker run` flags to a Compose service model. Flags
// cornus does not map are warned about by name and skipped, never dropped
// silently; a flag missing its value is an error.
func applyRunArgs(svc map[string]any, args []string) ([]spec.Warning, error) {
	return applyFlags(svc, args, runFlags, "devcontainer.json runArgs")
}

// applyFlags applies CLI flags (a table of them) to a Compose model;
// field names the key in warnings.
func applyFlags(svc map[string]any, args []string, flags []runFlag, field string) ([]spec.Warning, error) {
	var warns []spec.Warning
	for i := 0; i < len(args); i++ {
		arg := args[i]
		var name, val string
		hasVal := false
		switch {
		case strings.HasPrefix(arg, "--"):
			name, val, hasVal = strings.Cut(arg[2:], "=")
		case strings.HasPrefix(arg, "-") && len(arg) >= 2:
			name = arg[1:2]
			if len(arg) > 2 {
				val, hasVal = strings.TrimPrefix(arg[2:], "="), true
			}
		default:
			warns = append(warns, spec.Warning{Field: field, Message: fmt.Sprintf("%q is not a flag, ignored", arg)})
			continue
		}
		f, ok := lookupFlag(flags, name)
		if !ok {
			if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // the unknown flag's likely value
				arg += " " + args[i]
			}
			warns = append(warns, spec.Warning{Field: field, Message: fmt.Sprintf("%q is not supported by cornus, ignored", arg)})
			continue
		}
		if f.value && !hasVal {
			if i+1 >= len(args) {
				return warns, fmt.Errorf("%s needs a value", arg)
			}
			i++
			val = args[i]
		}
		if !f.value && hasVal && val != "true" {
			if val == "false" {
				continue
			}
			return warns, fmt.Errorf("%s takes no value", arg)
		}
		if err := f.apply(svc, val); err != nil {
			return warns, err
		}
	}
	return warns, nil
}

// buildFlags map the `docker build` flags of devcontainer.json's
// build.options onto the Compose build section.
var buildFlags = []runFlag{
	{names: []string{"build-arg"}, value: true, apply: putKV("args")},
	{names: []string{"label"}, value: true, apply: putKV("labels")},
	{names: []string{"add-host"}, value: true, apply: appendTo("extra_hosts")},
	{names: []string{"network"}, value: true, apply: setTo("network")},
	{names: []string{"target"}, value: true, apply: setTo("target")},
	{names: []string{"shm-size"}, value: true, apply: setTo("shm_size")},
	{names: []string{"platform"}, value: true, apply: appendTo("platforms")},
	{names: []string{"cache-from"}, value: true, apply: appendTo("cache_from")},
	{names: []string{"cache-to"}, value: true, apply: appendTo("cache_to")},
	{names: []string{"tag", "t"}, value: true, apply: appendTo("tags")},
	{names: []string{"no-cache"}, apply: setTrue("no_cache")},
	{names: []string{"pull"}, apply: setTrue("pull")},
	{names: []string{"allow"}, value: true, apply: appendTo("entitlements")},
	{names: []string{"progress"}, value: true, apply: func(map[string]any, string) error { return nil }},
}
