package plugin

import (
	"slices"
	"strings"
)

// ComposeFlag is one of `cornus compose`'s global flags; all take a value.
type ComposeFlag struct {
	Name      string // long name, without dashes
	Shorthand string // one letter, or ""
}

// ComposeGlobalFlags are the flags `cornus compose` accepts before its
// verb, so that `docker cornus -f x.yaml up` can be rewritten too. The CLI's
// tests check this list against the compose command.
func ComposeGlobalFlags() []ComposeFlag {
	return []ComposeFlag{
		{Name: "file", Shorthand: "f"},
		{Name: "project-name", Shorthand: "p"},
		{Name: "project-directory"},
		{Name: "profile"},
		{Name: "env-file"},
		{Name: "devcontainer"},
		{Name: "config"},
		{Name: "progress"},
		{Name: "server"},
	}
}

// ComposeVerbs are the `cornus compose` subcommands that `docker cornus`
// accepts without the word compose. The CLI's tests check this list
// against the compose command.
func ComposeVerbs() []string {
	return []string{"config", "convert", "up", "create", "cp", "build", "down", "ps", "logs", "exec", "run", "start", "stop", "restart", "kill", "pause", "unpause", "rm", "ls", "events", "wait", "stats", "scale", "attach", "images", "top", "port", "volumes", "pull", "watch", "export", "commit", "push"}
}

// Rewrite turns `docker cornus` shorthands into cornus commands:
// `up -d` → `compose up -d`, and `-f x.yaml up -d` →
// `compose -f x.yaml up -d` (compose's global flags may come first).
// Everything else — compose, deploy, image, validate, version, daemon,
// plugin, help, flags alone — is returned unchanged. args is not modified.
func Rewrite(args []string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		n := composeFlagWidth(args[i])
		if n == 0 {
			return slices.Clone(args) // not a compose flag: leave it to cobra
		}
		i += n
	}
	if i >= len(args) || !slices.Contains(ComposeVerbs(), args[i]) {
		return slices.Clone(args)
	}
	return append([]string{"compose"}, args...)
}

// composeFlagWidth is how many arguments the compose global flag arg uses:
// 1 when its value is attached (--file=x, -fx, -f=x), 2 when the value is
// the next argument, 0 when arg is not a compose global flag.
func composeFlagWidth(arg string) int {
	flags := ComposeGlobalFlags()
	if long, ok := strings.CutPrefix(arg, "--"); ok {
		name, _, attached := strings.Cut(long, "=")
		if !slices.ContainsFunc(flags, func(f ComposeFlag) bool { return f.Name == name }) {
			return 0
		}
		if attached {
			return 1
		}
		return 2
	}
	short := arg[1:]
	if !slices.ContainsFunc(flags, func(f ComposeFlag) bool { return f.Shorthand != "" && f.Shorthand == short[:1] }) {
		return 0
	}
	if len(short) > 1 {
		return 1
	}
	return 2
}
