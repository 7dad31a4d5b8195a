package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/spec"
	"github.com/cornus-dev/cornus/translate"
)

// sleeperCmd keeps a container running and stops at once on SIGTERM.
var sleeperCmd = []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"}

// TestHostPowerFrontEnds runs the hardening issue's default-deny table
// (backendtest.HostPowerCases) through every front end — a Compose file,
// a deploy.yaml and the real docker CLI through the Docker API proxy — on
// each backend: refused with no CORNUS_ALLOW_* and nothing left behind;
// honored once allowed (on backends other than the default, through one
// front end per case, in turn: hostPowerRun.honor).
func TestHostPowerFrontEnds(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	docker := tool(t, "docker", "the machine image ships the docker CLI 28")
	for _, backend := range proxyBackends {
		t.Run(backend, func(t *testing.T) {
			allowDir := t.TempDir()
			h, err := backendtest.NewHostEnv(allowDir)
			if err != nil {
				t.Fatal(err)
			}
			allowEnv := []string{"CORNUS_ALLOW_PRIVILEGED=1", "CORNUS_ALLOW_BIND_SOURCES=" + allowDir}
			denyEnv := []string{"CORNUS_ALLOW_PRIVILEGED=", "CORNUS_ALLOW_BIND_SOURCES="}
			deny := startProxy(t, backend, denyEnv...)
			allow := startProxy(t, backend, allowEnv...)
			missingCaps, err := backendtest.HostMissingCaps()
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range backendtest.HostPowerCases {
				t.Run(c.Name, func(t *testing.T) {
					t.Parallel()
					hp := hostPowerRun{t: t, c: c, h: h, backend: backend, runtimeRefuses: c.RuntimeRefuses,
						capsMayFail: c.NeedsAllCaps && len(missingCaps) > 0, unportable: c.Unportable != "",
						gaps: backends.Unhonored(b.Name(), b.Capabilities(), c.App)}
					fronts := hostPowerFrontEnds(c)
					for j, front := range fronts {
						t.Run(front, func(t *testing.T) {
							hp.t = t
							hp.honor = backend == fromenv.Default || j == i%len(fronts)
							switch front {
							case "compose":
								hp.compose(b, denyEnv, allowEnv)
							case "deploy.yaml":
								hp.deploy(b, denyEnv, allowEnv)
							default:
								hp.dockerCLI(docker, deny, allow)
							}
						})
					}
				})
			}
		})
	}
}

// hostPowerFrontEnds are the front ends case c can be written for.
func hostPowerFrontEnds(c backendtest.HostPowerCase) []string {
	var out []string
	if c.Compose != "" {
		out = append(out, "compose")
	}
	out = append(out, "deploy.yaml")
	if c.Docker != nil || c.DockerVolume != nil || c.DockerExec != nil || c.EngineAPI != "" {
		out = append(out, "docker CLI via the proxy")
	}
	return out
}

type hostPowerRun struct {
	t *testing.T
	// honor: after the refusal, allow the case and check it is honored.
	// Every front end refuses on every backend. On the default backend
	// every front end also honors every case; on the others the cases
	// take the front ends in turn for that half, which still brings each
	// front end to each backend: a front end translates a field the same
	// whatever the backend, and what each backend does with every field
	// is the contract suite's host-power case.
	honor          bool
	c              backendtest.HostPowerCase
	h              backendtest.HostEnv
	backend        string
	runtimeRefuses bool // allowed by the policy, refused by the runtime
	// capsMayFail: the case grants every capability and the host's
	// bounding set lacks some: a runtime may refuse it with its capability
	// error (dockerd) or honor it (containerd grants what the host has),
	// and then the check must hold.
	capsMayFail bool
	// unportable: a backend with no form for the case may refuse it.
	unportable bool
	// gaps: the backend declares the case's field a gap (warned, deployed,
	// not honored), as the contract suite's host-power run accepts.
	gaps []spec.Warning
}

func uniqueName(prefix string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// refused checks a front end's answer to a host-power field with no
// CORNUS_ALLOW_*: an error naming the field and the variable.
func (r hostPowerRun) refused(out string, code int, field string) {
	r.t.Helper()
	allowVar, _, _ := strings.Cut(r.c.Allow, "=")
	if code == 0 || !strings.Contains(out, "refused by the host policy") || !strings.Contains(out, allowVar) || (field != "" && !strings.Contains(out, field)) {
		r.t.Fatalf("want a refusal naming %q and %s; exit %d:\n%s", field, allowVar, code, out)
	}
}

// honored checks a front end's answer once allowed, then runs the case's
// check in the container through exec.
func (r hostPowerRun) honored(out string, code int, exec func(script string) (string, int)) {
	r.t.Helper()
	if r.c.NotDeployedWhy != "" {
		r.t.Fatalf("a case that must never be deployed was: %s", r.c.NotDeployedWhy)
	}
	if r.runtimeRefuses {
		if code == 0 {
			r.t.Fatalf("allowed: the runtime should refuse it here, yet it succeeded:\n%s", out)
		}
		if strings.Contains(out, "refused by the host policy") {
			r.t.Fatalf("allowed, yet refused by the host policy:\n%s", out)
		}
		return
	}
	if code != 0 && r.capsMayFail && backendtest.CapabilityRefusal(out) {
		r.t.Logf("allowed by the policy; the runtime cannot grant every capability on this host:\n%s", out)
		return
	}
	if code != 0 && r.unportable && !strings.Contains(out, "refused by the host policy") {
		r.t.Logf("allowed by the policy; the backend has no form for it (%s):\n%s", r.c.Unportable, out)
		return
	}
	if code != 0 {
		r.t.Fatalf("allowed by %s: exit %d:\n%s", r.c.Allow, code, out)
	}
	if len(r.gaps) > 0 {
		if !strings.Contains(out, "not supported by the ") {
			r.t.Fatalf("declared gap %v: deployed without its warning:\n%s", r.gaps, out)
		}
		r.t.Logf("declared gap, warned and deployed: %v", r.gaps)
		return
	}
	if r.c.Check == "" {
		r.t.Logf("runs; honoring not observed: %s", r.c.NotHonoredWhy)
		return
	}
	if out, code := exec(r.h.Expand(r.c.Check)); code != 0 {
		r.t.Fatalf("allowed, but not honored: %s exited %d: %s", r.h.Expand(r.c.Check), code, out)
	}
}

func (r hostPowerRun) compose(b backends.Backend, denyEnv, allowEnv []string) {
	yml := "services:\n  app:\n    image: " + image + "\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 0.2; done\"]\n"
	for _, line := range strings.Split(r.h.Expand(r.c.Compose), "\n") {
		yml += "    " + line + "\n"
	}
	yml += r.h.Expand(r.c.ComposeTop) + "\n"
	field := translate.ComposePath("services.app." + r.c.Field)
	if r.c.Volumes != nil {
		for key := range r.c.Volumes {
			field = translate.ComposePath("volumes." + key + "." + r.c.Field)
		}
	}
	p := newProject(r.t, yml, "CORNUS_DEPLOY_BACKEND="+r.backend)
	p.env = append(p.env, denyEnv...)
	_, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
	r.refused(errOut, code, field)
	assertNoLeftovers(r.t, b, p.name)

	if r.c.NotDeployedWhy != "" || !r.honor {
		return
	}
	p.env = append(p.env, allowEnv...)
	out, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
	r.honored(out+errOut, code, func(script string) (string, int) {
		out, errOut, code := p.run("compose", "exec", "-T", "app", "sh", "-c", script)
		return out + errOut, code
	})
}

func (r hostPowerRun) deploy(b backends.Backend, denyEnv, allowEnv []string) {
	a, vols := r.h.ExpandApp(r.c.App, r.c.Volumes)
	if a.Command == nil {
		a.Command = spec.Command(sleeperCmd)
	}
	a.Image = image
	name := uniqueName("hp")
	proj := spec.Project{Name: name, Services: map[string]spec.App{"app": a}}
	field := "services.app." + r.c.Field
	for key, v := range vols {
		v.Name = name + "_" + key
		proj.Volumes = map[string]spec.Volume{key: v}
		field = "volumes." + key + "." + r.c.Field
	}
	data, err := yaml.Marshal(proj)
	if err != nil {
		r.t.Fatal(err)
	}
	p := newProject(r.t, "services: {}\n", "CORNUS_DEPLOY_BACKEND="+r.backend, "COMPOSE_PROJECT_NAME="+name)
	p.name = name
	file := filepath.Join(p.dir, "deploy.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _, _, _ = p.run("deploy", "-f", file, "--delete", "-v") })
	p.env = append(p.env, denyEnv...)
	_, errOut, code := p.run("deploy", "-f", file)
	r.refused(errOut, code, field)
	assertNoLeftovers(r.t, b, name)

	if r.c.NotDeployedWhy != "" || !r.honor {
		return
	}
	p.env = append(p.env, allowEnv...)
	out, errOut, code := p.run("deploy", "-f", file)
	r.honored(out+errOut, code, func(script string) (string, int) {
		out, errOut, code := p.run("compose", "-p", name, "exec", "-T", "app", "sh", "-c", script)
		return out + errOut, code
	})
}

func (r hostPowerRun) dockerCLI(docker string, deny, allow *proxy) {
	t := r.t
	name := uniqueName("hpcli")
	for _, p := range []*proxy{deny, allow} {
		p := p
		t.Cleanup(func() {
			p.run("", docker, "rm", "-f", "-v", name) // -v: an inline volume mount made an anonymous volume
			p.run("", docker, "volume", "rm", "-f", name)
		})
	}
	run := func(p *proxy, args ...string) (string, int) {
		p.t = t
		return p.run("", docker, args...)
	}
	runArgs := func(flags []string) []string {
		args := append([]string{"run", "-d", "--name", name}, r.h.ExpandAll(flags)...)
		return append(append(args, image), sleeperCmd...)
	}
	absent := func() {
		t.Helper()
		if out, _ := run(allow, "ps", "-a", "-q", "--filter", "name=^"+name+"$"); strings.TrimSpace(out) != "" {
			t.Fatalf("a refused request left container %s behind", name)
		}
		if _, code := run(allow, "volume", "inspect", name); code == 0 {
			t.Fatalf("a refused request left volume %s behind", name)
		}
	}
	exec := func(script string) (string, int) { return run(allow, "exec", name, "sh", "-c", script) }
	switch {
	case r.c.DockerVolume != nil:
		out, code := run(deny, append(append([]string{"volume", "create"}, r.h.ExpandAll(r.c.DockerVolume)...), name)...)
		r.refused(out, code, "DriverOpts")
		absent()
		if !r.honor {
			return
		}
		if out, code = run(allow, append(append([]string{"volume", "create"}, r.h.ExpandAll(r.c.DockerVolume)...), name)...); code != 0 {
			if r.c.Unportable != "" && !strings.Contains(out, "refused by the host policy") {
				t.Logf("allowed by the policy; the backend has no form for it (%s):\n%s", r.c.Unportable, out)
				return
			}
			t.Fatalf("allowed volume create: %s", out)
		}
		// Mounting a volume created with host power is checked too.
		out, code = run(deny, runArgs([]string{"-v", name + ":/host"})...)
		r.refused(out, code, "volume "+name)
		if r.c.NotDeployedWhy != "" {
			return
		}
		out, code = run(allow, runArgs([]string{"-v", name + ":/host"})...)
		r.honored(out, code, exec)
	case r.c.DockerExec != nil:
		if out, code := run(deny, runArgs(nil)...); code != 0 {
			t.Fatalf("plain container: %s", out)
		}
		hook := append(append([]string{"exec"}, r.c.DockerExec...), name, "sh", "-c", "grep CapEff /proc/self/status > /tmp/hook")
		out, code := run(deny, hook...)
		r.refused(out, code, "")
		if !r.honor {
			return
		}
		out, code = run(allow, hook...)
		// A backend with no privileged exec declares the gap (its hooks
		// run with the container's privileges); docker exec --privileged
		// is refused saying so, never run without the privilege.
		if code != 0 && slices.ContainsFunc(r.gaps, func(w spec.Warning) bool { return w.Field == "hooks.privileged" }) && strings.Contains(out, "not implemented") {
			t.Logf("a privileged exec is a declared gap here (hooks.privileged), refused:\n%s", out)
			return
		}
		r.honored(out, code, exec)
	case r.c.EngineAPI != "":
		// The docker CLI refuses this itself; a hostile client does not.
		out, code := postCreate(t, deny, name, r.h.Expand(r.c.EngineAPI))
		r.refused(out, code, "HostConfig.")
		absent()
		if !r.honor {
			return
		}
		out, code = postCreate(t, allow, name, r.h.Expand(r.c.EngineAPI))
		if code == 0 {
			out, code = run(allow, "start", name)
		}
		r.honored(out, code, exec)
	default:
		out, code := run(deny, runArgs(r.c.Docker)...)
		r.refused(out, code, "HostConfig.")
		absent()
		if !r.honor {
			return
		}
		out, code = run(allow, runArgs(r.c.Docker)...)
		r.honored(out, code, exec)
	}
}

// assertNoLeftovers fails if the project has any container, network or
// volume.
func assertNoLeftovers(t *testing.T, b backends.Backend, project string) {
	t.Helper()
	if cs, ns, vs := leftovers(t, b, project); cs+ns+vs > 0 {
		t.Fatalf("a refused request left %d containers, %d networks, %d volumes of project %s", cs, ns, vs, project)
	}
}

// postCreate sends POST /containers/create straight to a proxy with the
// given HostConfig and returns the body and 0, or the body and the status.
func postCreate(t *testing.T, p *proxy, name, hostConfig string) (string, int) {
	t.Helper()
	c := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", p.sock)
	}}}
	body := `{"Image": "` + image + `", "Cmd": ["sh", "-c", "sleep 1000"], "HostConfig": ` + hostConfig + `}`
	resp, err := c.Post("http://docker/v1.41/containers/create?name="+name, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusCreated {
		return string(b), 0
	}
	return string(b), resp.StatusCode
}

// TestHostPowerDevcontainer: devcontainer.json reaches the same host
// policy (its privileged, capAdd, securityOpt, mounts and runArgs).
func TestHostPowerDevcontainer(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	for _, c := range []struct{ name, json, field string }{
		{"privileged", `"privileged": true`, "privileged"},
		{"capAdd", `"capAdd": ["SYS_PTRACE"]`, "cap_add"},
		{"securityOpt", `"securityOpt": ["seccomp=unconfined"]`, "security_opt"},
		{"runArgs pid host", `"runArgs": ["--pid=host"]`, "pid"},
		{"runArgs device", `"runArgs": ["--device=/dev/null"]`, "devices"},
		{"mounts bind", `"mounts": ["source=/etc,target=/hostetc,type=bind"]`, "volumes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t, "")
			_ = os.Remove(filepath.Join(p.dir, "compose.yaml"))
			dc := `{"image": "` + image + `", "overrideCommand": true, ` + c.json + `}`
			if err := os.MkdirAll(filepath.Join(p.dir, ".devcontainer"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p.dir, ".devcontainer", "devcontainer.json"), []byte(dc), 0o644); err != nil {
				t.Fatal(err)
			}
			p.env = append(p.env, "CORNUS_ALLOW_PRIVILEGED=", "CORNUS_ALLOW_BIND_SOURCES=")
			_, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
			if code == 0 || !strings.Contains(errOut, "refused by the host policy") || !strings.Contains(errOut, c.field) {
				t.Fatalf("want a refusal naming %s; exit %d:\n%s", c.field, code, errOut)
			}
			assertNoLeftovers(t, b, p.name)
		})
	}
}
