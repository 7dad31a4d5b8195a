package clientdeploy

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/internal/boundedfile"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// envSessionEgress carries a project's egress policies to the session
// agent, which answers the server's egress streams for it.
const envSessionEgress = "CORNUS_SESSION_EGRESS"

// EgressFlags are a command line's egress policy as given (deploy,
// egress check): the CLI binds its --egress* flags into them.
type EgressFlags struct {
	Mode    string
	Routes  []string // PATTERN=ROUTE
	Default string
	PAC     string // a PAC file
}

// Set says whether any of the flags was given.
func (f *EgressFlags) Set() bool {
	return f.Mode != "" || len(f.Routes) > 0 || f.Default != "" || f.PAC != ""
}

// Policy is the flags as a spec egress block, compiled once to refuse a
// bad one.
func (f *EgressFlags) Policy() (*spec.Egress, error) {
	e := &spec.Egress{Mode: f.Mode, Default: f.Default}
	for _, r := range f.Routes {
		pat, route, ok := strings.Cut(r, "=")
		if !ok {
			return nil, fmt.Errorf("--egress-route %q: want PATTERN=ROUTE, e.g. '*.corp.example=client'", r)
		}
		e.Rules = append(e.Rules, spec.EgressRule{Pattern: pat, Route: route})
	}
	if f.PAC != "" {
		data, err := boundedfile.Read(f.PAC, boundedfile.SpecFile)
		if err != nil {
			return nil, fmt.Errorf("--egress-pac: %w", err)
		}
		e.Script = string(data)
	}
	if _, err := egress.Compile(e, "--egress", egress.PACOptions{}); err != nil {
		return nil, err
	}
	return e, nil
}

// applyEgress gives every app the command line's policy (it replaces the
// spec's, as a service block replaces the project default), then the
// client's proxy variables to apps in env mode.
func applyEgress(p *spec.Project, f *EgressFlags, environ []string) error {
	if f != nil && f.Set() {
		e, err := f.Policy()
		if err != nil {
			return err
		}
		for name, a := range p.Services {
			a.Egress = e
			p.Services[name] = a
		}
	}
	egress.InjectEnv(p, environ)
	return nil
}

// refuseDetachedClientRoutes: a detached deployment outlives its client,
// so nothing could carry a client route.
func refuseDetachedClientRoutes(p spec.Project) error {
	bad, err := egress.Routed(p, egress.Client)
	if err != nil || len(bad) == 0 {
		return err
	}
	return fmt.Errorf("--detach: services %s may route egress to the client, which a detached deployment outlives; drop --detach or the client routes (a PAC script counts as possibly routing to the client)", strings.Join(bad, ", "))
}

// egressBlocks are p's services' egress policies that send something to
// the client (nil: none, and the session serves no egress).
func egressBlocks(p spec.Project) map[string]*spec.Egress {
	var out map[string]*spec.Egress
	for name, a := range p.Services {
		if a.Egress == nil {
			continue
		}
		if out == nil {
			out = map[string]*spec.Egress{}
		}
		out[name] = a.Egress
	}
	return out
}

// serveEgress answers the server's egress streams on sess: the last hop,
// which decides again with this client's copy of the policies and dials
// through this machine's network and proxy settings.
func serveEgress(sess *client.Session, blocks map[string]*spec.Egress, environ []string, errw io.Writer) error {
	if sess == nil || len(blocks) == 0 {
		return nil
	}
	if note := client.ProxyNote(environ); note != "" {
		fmt.Fprintln(errw, "WARN", note)
	}
	pols := map[string]*egress.Policy{}
	for name, b := range blocks {
		p, err := egress.Compile(b, "services."+name+".egress", egress.PACOptions{})
		if err != nil {
			return err
		}
		pols[name] = p
	}
	sess.Handle(api.OpEgress, client.EgressHandler(pols, environ))
	return nil
}

// egressEnv is blocks for the session agent's environment.
func egressEnv(blocks map[string]*spec.Egress) []string {
	if len(blocks) == 0 {
		return []string{envSessionEgress + "="}
	}
	b, _ := json.Marshal(blocks)
	return []string{envSessionEgress + "=" + string(b)}
}

// egressFromEnv reads what egressEnv wrote.
func egressFromEnv(environ []string) (map[string]*spec.Egress, error) {
	raw := envlist.Get(environ, envSessionEgress)
	if raw == "" {
		return nil, nil
	}
	var blocks map[string]*spec.Egress
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, fmt.Errorf("%s: %w", envSessionEgress, err)
	}
	return blocks, nil
}
