package main

import (
	"encoding/json"
	"fmt"

	"github.com/cornus-dev/cornus/egress"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// envSessionEgress carries a project's egress policies to the session
// agent, which answers the server's egress streams for it.
const envSessionEgress = "CORNUS_SESSION_EGRESS"

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
func serveEgress(sess *client.Session, blocks map[string]*spec.Egress, environ []string) error {
	if sess == nil || len(blocks) == 0 {
		return nil
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
	raw := envValue(environ, envSessionEgress)
	if raw == "" {
		return nil, nil
	}
	var blocks map[string]*spec.Egress
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, fmt.Errorf("%s: %w", envSessionEgress, err)
	}
	return blocks, nil
}
