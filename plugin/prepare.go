package plugin

import "slices"

// PrepareOptions are what the plugin process was started with.
type PrepareOptions struct {
	Args    []string // os.Args[1:]
	Environ []string // KEY=VALUE
}

// PrepareResult is the cornus command line to run in plugin mode.
type PrepareResult struct {
	Args     []string      // cornus's arguments (no program name)
	Environ  []string      // the environ to run them with
	Daemon   ResolveResult // how the daemon was chosen
	Debug    bool          // -D or --log-level debug|trace: report Daemon
	Warnings []string
}

// Prepare parses the plugin's argv (ParseArgs: docker global options, the
// plugin name, shorthands) and resolves the daemon (Resolve).
func Prepare(o PrepareOptions) (PrepareResult, error) {
	inv, err := ParseArgs(o.Args)
	if err != nil {
		return PrepareResult{}, err
	}
	r, err := Resolve(ResolveOptions{Globals: inv.Globals, Environ: o.Environ})
	if err != nil {
		return PrepareResult{}, err
	}
	g := inv.Globals
	return PrepareResult{
		Args:     inv.Args,
		Environ:  r.Environ,
		Daemon:   r,
		Debug:    g.Debug || g.LogLevel == "debug" || g.LogLevel == "trace",
		Warnings: slices.Clone(r.Warnings),
	}, nil
}
