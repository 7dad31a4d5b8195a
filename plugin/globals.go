package plugin

import (
	"fmt"
	"io"

	"github.com/containerd/errdefs"
	"github.com/sirupsen/logrus"
	"github.com/spf13/pflag"
)

// GlobalOptions are the docker CLI's global options, which it passes to a
// plugin ahead of the plugin name: `docker-cornus [OPTIONS] cornus ARGS`.
type GlobalOptions struct {
	Config    string   // --config DIR
	Context   string   // -c, --context NAME
	Debug     bool     // -D, --debug
	Hosts     []string // -H, --host URL (repeatable; the docker CLI allows one)
	LogLevel  string   // -l, --log-level LEVEL ("" when not given)
	TLS       bool     // --tls
	TLSVerify *bool    // --tlsverify[=false]; nil when not given
	TLSCACert string   // --tlscacert FILE
	TLSCert   string   // --tlscert FILE
	TLSKey    string   // --tlskey FILE
}

// tlsRequested reports whether any TLS option was given.
func (g GlobalOptions) tlsRequested() bool {
	return g.TLS || (g.TLSVerify != nil && *g.TLSVerify) || g.TLSCACert != "" || g.TLSCert != "" || g.TLSKey != ""
}

// ParseGlobals parses the docker global options at the start of args with
// the docker CLI's own flag library and rules (pflag, parsing stops at the
// first non-option): `--flag value`, `--flag=value`, `-H value`, `-Hvalue`,
// `-H=value`, grouped shorthands (`-DH unix:///x`) and `--bool=false`. It
// returns the options and the arguments after them.
func ParseGlobals(args []string) (GlobalOptions, []string, error) {
	var g GlobalOptions
	var verify bool
	fs := pflag.NewFlagSet("docker", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&g.Config, "config", "", "Location of client config files")
	fs.StringVarP(&g.Context, "context", "c", "", "Name of the context to use")
	fs.BoolVarP(&g.Debug, "debug", "D", false, "Enable debug mode")
	fs.StringArrayVarP(&g.Hosts, "host", "H", nil, "Daemon socket to connect to")
	fs.StringVarP(&g.LogLevel, "log-level", "l", "", "Set the logging level")
	fs.BoolVar(&g.TLS, "tls", false, "Use TLS; implied by --tlsverify")
	fs.BoolVar(&verify, "tlsverify", false, "Use TLS and verify the remote")
	fs.StringVar(&g.TLSCACert, "tlscacert", "", "Trust certs signed only by this CA")
	fs.StringVar(&g.TLSCert, "tlscert", "", "Path to TLS certificate file")
	fs.StringVar(&g.TLSKey, "tlskey", "", "Path to TLS key file")
	if err := fs.Parse(args); err != nil {
		return GlobalOptions{}, nil, fmt.Errorf("docker global options %q: %w: %w", args, errdefs.ErrInvalidArgument, err)
	}
	if fs.Changed("tlsverify") {
		g.TLSVerify = &verify
	}
	if g.LogLevel != "" {
		if _, err := logrus.ParseLevel(g.LogLevel); err != nil {
			return GlobalOptions{}, nil, fmt.Errorf("--log-level %q: use debug, info, warn, error or fatal: %w", g.LogLevel, errdefs.ErrInvalidArgument)
		}
	}
	return g, fs.Args(), nil
}

// Invocation is one run of the plugin turned into a cornus command line.
type Invocation struct {
	Globals GlobalOptions
	Args    []string // cornus's arguments, shorthands rewritten
}

// ParseArgs parses the plugin's argv (os.Args[1:]) as the docker CLI
// builds it: `[OPTIONS] cornus ARGS`, `help cornus ARGS` (from
// `docker help cornus`) or `__complete cornus ARGS` (shell completion).
// The cornus arguments get Rewrite's shorthands.
func ParseArgs(args []string) (Invocation, error) {
	g, rest, err := ParseGlobals(args)
	if err != nil {
		return Invocation{}, err
	}
	switch {
	case len(rest) > 0 && rest[0] == Name:
		return Invocation{Globals: g, Args: Rewrite(rest[1:])}, nil
	case len(rest) > 1 && rest[1] == Name && (rest[0] == "help" || rest[0] == "__complete" || rest[0] == "__completeNoDesc"):
		return Invocation{Globals: g, Args: append([]string{rest[0]}, Rewrite(rest[2:])...)}, nil
	}
	got := "nothing"
	if len(rest) > 0 {
		got = fmt.Sprintf("%q", rest[0])
	}
	return Invocation{}, fmt.Errorf("%s is the cornus Docker CLI plugin and expects the plugin name %q after the docker options, got %s: run it as `docker %s COMMAND` (or run the binary as `cornus COMMAND`): %w",
		BinaryName, Name, got, Name, errdefs.ErrInvalidArgument)
}
