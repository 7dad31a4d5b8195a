package spec

import (
	"fmt"
	"maps"
	"slices"
)

// Linux's exec limits. A string longer than MaxArgStrlen (counting its
// NUL) or an argv+env larger than MaxArgEnv makes execve fail with E2BIG,
// so a container or hook carrying one could never start: refuse it when
// the spec is validated instead, before a large value travels any further.
const (
	// MaxArgStrlen is MAX_ARG_STRLEN: 32 pages of 4 KiB, per string.
	MaxArgStrlen = 131072
	// MaxArgEnv is the default ARG_MAX (a quarter of the default 8 MiB
	// stack), for argv and env strings together with their NULs. The
	// image's own environment adds to it at run time.
	MaxArgEnv = 2 << 20
)

// validateExecLimits checks the strings the app's processes are exec'd
// with: the container (entrypoint, command, env), each hook (its command
// and env on top of the app's env) and the healthcheck test.
func validateExecLimits(at string, a App, ps *Problems) {
	envSize := envBytes(at+".env", a.Env, ps)
	total := envSize + argvBytes(at+".entrypoint", a.Entrypoint, ps) + argvBytes(at+".command", a.Command, ps)
	checkTotal(at, total, ps)
	if a.Healthcheck != nil {
		checkTotal(at+".healthcheck", envSize+argvBytes(at+".healthcheck.test", a.Healthcheck.Test, ps), ps)
	}
	if h := a.Hooks; h != nil {
		for _, set := range []struct {
			name  string
			hooks []Hook
		}{{"postCreate", h.PostCreate}, {"postStart", h.PostStart}, {"postAttach", h.PostAttach}, {"preStop", h.PreStop}} {
			for i, hk := range set.hooks {
				hp := fmt.Sprintf("%s.hooks.%s[%d]", at, set.name, i)
				size := envSize + envBytes(hp+".env", hk.Env, ps) + argvBytes(hp+".command", hk.Command, ps)
				checkTotal(hp, size, ps)
			}
		}
	}
}

// argvBytes reports each too-long argument and returns the argv's size.
func argvBytes(at string, argv []string, ps *Problems) int {
	n := 0
	for i, s := range argv {
		if len(s)+1 > MaxArgStrlen {
			ps.add(fmt.Sprintf("%s[%d]", at, i), "is %d bytes; Linux's exec takes at most %d per argument, counting its NUL (MAX_ARG_STRLEN): pass large data in a file", len(s), MaxArgStrlen)
		}
		n += len(s) + 1
	}
	return n
}

// envBytes reports each too-long KEY=VALUE entry and returns the env's
// size. The key is named in the message, shortened: the field path is
// rewritten for Compose and must not be mangled by an odd key.
func envBytes(at string, env map[string]string, ps *Problems) int {
	n := 0
	for _, k := range slices.Sorted(maps.Keys(env)) {
		l := len(k) + 1 + len(env[k]) + 1
		if l > MaxArgStrlen {
			ps.add(at, "%s=... is %d bytes; Linux's exec takes at most %d per environment entry, counting its NUL (MAX_ARG_STRLEN): pass large data in a file", shorten(k), l-1, MaxArgStrlen)
		}
		n += l
	}
	return n
}

// checkTotal reports an argv+env (at names the process) over MaxArgEnv.
func checkTotal(at string, size int, ps *Problems) {
	if size > MaxArgEnv {
		ps.add(at, "its command and environment together are %d bytes; Linux's exec takes at most %d (the default ARG_MAX): pass large data in files", size, MaxArgEnv)
	}
}

// shorten keeps a user-chosen name readable in a message.
func shorten(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return s
}
