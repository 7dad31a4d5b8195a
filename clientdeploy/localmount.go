package clientdeploy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// envSessionExports hands the session agent (up -d) the exports it
// serves: JSON of []client.ExportSpec, by index.
const envSessionExports = "CORNUS_SESSION_EXPORTS"

// parseLocalMounts parses --local-mount values, relative to dir.
func parseLocalMounts(values []string, dir string) ([]client.LocalMount, error) {
	out := make([]client.LocalMount, 0, len(values))
	for _, v := range values {
		m, err := client.ParseLocalMount(v, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// localExports resolves a deployment's client-local mounts; nil when
// there are none. They need a server and a session a client holds.
func (se *Session) localExports(p spec.Project, mounts []client.LocalMount, unheld bool) (*client.Exports, error) {
	if len(mounts) == 0 {
		return nil, nil
	}
	if se.remote == nil {
		return nil, fmt.Errorf("--local-mount needs --server (on this machine, use a bind mount)")
	}
	if unheld {
		return nil, fmt.Errorf("--local-mount cannot go with --detach: this client serves the files, so the deployment lives with its session")
	}
	exp, err := client.NewExports(p, mounts)
	if err != nil {
		return nil, err
	}
	se.remote.projects.LocalMounts = exp.Wire
	return exp, nil
}

// serveExports serves exp on the session this process holds.
func serveExports(ctx context.Context, sess *client.Session, exp *client.Exports) {
	if exp != nil && sess != nil {
		// Until the session ends, not until ctx: the server unmounts
		// after it removed the containers.
		sess.Handle(api.OpMount, exp.Handler(context.WithoutCancel(ctx)))
	}
}

// bindsToLocal makes a Compose project's bind mounts client-local mounts
// when it deploys to a server, and says so on stderr.
func (se *Session) bindsToLocal(p spec.Project) (spec.Project, []client.LocalMount, error) {
	out, mounts, notes, err := client.BindsToLocal(p)
	if err != nil {
		return p, nil, err
	}
	for _, n := range notes {
		fmt.Fprintln(se.streams.Err, n)
	}
	return out, mounts, nil
}

// exportsEnv is exp for the session agent's environment.
func exportsEnv(exp *client.Exports) []string {
	if exp == nil {
		return []string{envSessionExports + "="} // none, whatever this process inherited
	}
	b, _ := json.Marshal(exp.Specs)
	return []string{envSessionExports + "=" + string(b)}
}

// agentExports reads the exports the agent serves from its environment.
func agentExports(environ []string) (*client.Exports, error) {
	v := envlist.Get(environ, envSessionExports)
	if v == "" {
		return nil, nil
	}
	var specs []client.ExportSpec
	if err := json.Unmarshal([]byte(v), &specs); err != nil {
		return nil, fmt.Errorf("%s: %w", envSessionExports, err)
	}
	if len(specs) > api.MaxLocalMounts {
		return nil, fmt.Errorf("%s: %d exports, at most %d", envSessionExports, len(specs), api.MaxLocalMounts)
	}
	return &client.Exports{Specs: specs}, nil
}
