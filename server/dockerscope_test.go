package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/dockerapi"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// The docker role, attacked: alice's workload holds a docker endpoint;
// bob deployed a project with a container, a network and a volume. No
// route of alice's endpoint finds, changes, joins or mounts any of bob's
// things, lists them, or puts a container in bob's project; a service
// without the role gets no endpoint; bob's container runs unchanged.
func TestDockerEndpointTenancy(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	alice := sleeperProject(uniqueProject("dka"))
	ts.upAs(ts.alice, alice)
	bob := sleeperProject(uniqueProject("dkb"))
	app := bob.Services["app"]
	app.Volumes = []spec.VolumeMount{{Source: "data", Target: "/data"}}
	bob.Services["app"] = app
	bob.Volumes = map[string]spec.Volume{"data": {}}
	ts.upAs(ts.bob, bob)
	bc := ts.containers(bob.Name)[0]
	bvols, err := ts.b.ListVolumes(ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: bob.Name}})
	if err != nil || len(bvols) != 1 {
		t.Fatalf("bob's volume: %v, %v", bvols, err)
	}
	bvol := bvols[0].Name
	bnet := ""
	if n, err := backends.Want[backends.Networks](ts.b, backends.FeatureNetworks, "networks"); err == nil {
		ns, err := n.ListNetworks(ctx, backends.ListOptions{Labels: map[string]string{backends.ComposeProject: bob.Name}})
		if err != nil || len(ns) == 0 {
			t.Fatalf("bob's network: %v, %v", ns, err)
		}
		bnet = ns[0].Name
	}

	withDocker := alice
	withDocker.Services = map[string]spec.App{"app": {Name: "app", Docker: true}}
	if err := ts.srv.dockers.set(withDocker); err != nil {
		t.Fatal(err)
	}
	ts.dockerRelay(ctx, alice.Name)

	eng := dockerapi.New(&scoped{s: ts.srv, b: ts.srv.b, tenant: "alice", project: alice.Name},
		dockerapi.WithPolicy(ts.srv.hostPolicy), dockerapi.WithReadCache(false))
	h := httptest.NewServer(eng.Handler())
	defer h.Close()
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, h.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(data)
	}
	refused := func(method, path, body string) {
		t.Helper()
		if code, out := call(method, path, body); code < 400 || code == http.StatusNotImplemented && !strings.Contains(path, "export") && !strings.Contains(path, "commit") {
			t.Errorf("alice %s %s: %d %s", method, path, code, out)
		}
	}

	for _, ref := range []string{bc.ID, bc.Name, bc.ID[:12]} {
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/containers/%s/json", ""}, {"GET", "/containers/%s/logs?stdout=1", ""},
			{"GET", "/containers/%s/top", ""}, {"GET", "/containers/%s/stats?stream=0", ""},
			{"POST", "/containers/%s/start", ""}, {"POST", "/containers/%s/stop?t=0", ""},
			{"POST", "/containers/%s/restart?t=0", ""}, {"POST", "/containers/%s/kill", ""},
			{"POST", "/containers/%s/pause", ""}, {"POST", "/containers/%s/unpause", ""},
			{"POST", "/containers/%s/wait", ""}, {"POST", "/containers/%s/attach?stream=1&stdout=1", ""},
			{"POST", "/containers/%s/resize?h=10&w=10", ""}, {"POST", "/containers/%s/rename?name=stolen" + ref[:4], ""},
			{"DELETE", "/containers/%s?force=1&v=1", ""}, {"GET", "/containers/%s/archive?path=/etc/hostname", ""},
			{"HEAD", "/containers/%s/archive?path=/etc", ""}, {"PUT", "/containers/%s/archive?path=/tmp", ""},
			{"GET", "/containers/%s/export", ""}, {"POST", "/commit?container=%s", "{}"},
			{"POST", "/containers/%s/exec", `{"Cmd":["true"]}`},
		} {
			refused(r.method, fmt.Sprintf(r.path, ref), r.body)
		}
	}
	// Namespaces, networks, volumes and labels of bob's, in a create.
	create := func(hostConfig, extra string) string {
		return `{"Image":"` + testImage + `","Cmd":["true"]` + extra + `,"HostConfig":{` + hostConfig + `}}`
	}
	for _, body := range []string{
		create(`"NetworkMode":"container:`+bc.ID+`"`, ""), create(`"PidMode":"container:`+bc.Name+`"`, ""),
		create(`"IpcMode":"container:`+bc.ID+`"`, ""),
		create(`"Mounts":[{"Type":"volume","Source":"`+bvol+`","Target":"/x"}]`, ""),
		create(`"Binds":["`+bvol+`:/x"]`, ""),
		create(`"Binds":["/etc:/x"]`, ""), create(`"Privileged":true`, ""),
		create("", `,"Labels":{"com.docker.compose.project":"`+bob.Name+`"}`),
		create("", `,"Labels":{"cornus.project":"`+bob.Name+`"}`),
		create("", `,"Labels":{"`+LabelTenant+`":"bob"}`),
		`{"Image":"` + caretaker.AgentRepo + `:1","Cmd":["true"]}`,
	} {
		refused("POST", "/containers/create?name=dk"+uniqueProject(""), body)
	}
	if bnet != "" {
		refused("POST", "/containers/create", create(`"NetworkMode":"`+bnet+`"`, ""))
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/networks/" + bnet, ""}, {"DELETE", "/networks/" + bnet, ""},
			{"POST", "/networks/" + bnet + "/connect", `{"Container":"` + bc.ID + `"}`},
			{"POST", "/networks/" + bnet + "/disconnect", `{"Container":"` + bc.ID + `"}`},
			{"POST", "/networks/create", `{"Name":"` + bnet + `","Labels":{"com.docker.compose.project":"` + bob.Name + `"}}`},
		} {
			refused(r.method, r.path, r.body)
		}
	}
	// Names that would pass for bob's (his projects' runtime names) or a
	// caretaker's: refused for every kind of thing, and for a rename.
	for _, r := range []struct{ path, body string }{
		{"/volumes/create", `{"Name":"` + bob.Name + `_cornus-caretaker-app-1"}`},
		{"/volumes/create", `{"Name":"` + bob.Name + `_data2"}`},
		{"/networks/create", `{"Name":"` + bob.Name + `_default2"}`},
		{"/containers/create?name=" + bob.Name + "-app-2", create("", "")},
		{"/containers/create?name=x-caretaker", create("", "")},
		{"/containers/create", create(`"UTSMode":"container:`+bc.ID+`"`, "")},
		{"/containers/create", create(`"CgroupnsMode":"container:`+bc.ID+`"`, "")},
	} {
		refused("POST", r.path, r.body)
	}
	refused("GET", "/volumes/"+bvol, "")
	refused("DELETE", "/volumes/"+bvol+"?force=1", "")
	refused("POST", "/volumes/create", `{"Name":"`+bvol+`"}`)
	// Lists show none of it.
	for _, path := range []string{"/containers/json?all=1", "/volumes", "/networks", "/images/json"} {
		_, out := call("GET", path, "")
		for _, name := range []string{bc.ID, bob.Name, bvol, "caretaker"} {
			if strings.Contains(out, name) {
				t.Errorf("alice's %s lists %s: %s", path, name, out)
			}
		}
	}
	d, err := ts.b.Inspect(ctx, bc.ID)
	if err != nil || d.State != backends.StateRunning || d.Name != bc.Name {
		t.Errorf("bob's container after alice's attempts: %+v, %v", d.Container, err)
	}

	// Her own do work: a container of her project, which her list shows.
	code, out := call("POST", "/containers/create?name=dk"+uniqueProject(""), create("", ""))
	if code != http.StatusCreated {
		t.Fatalf("alice's own create: %d %s", code, out)
	}
	var made struct{ ID string }
	_ = json.Unmarshal([]byte(out), &made)
	t.Cleanup(func() { _ = ts.b.Remove(context.Background(), made.ID, backends.RemoveOptions{Force: true}) })
	got, err := ts.b.Inspect(ctx, made.ID)
	if err != nil || got.Labels[backends.ComposeProject] != alice.Name || got.Labels[LabelTenant] != "alice" {
		t.Errorf("alice's docker run is not in her deployment's project: %v, %v", got.Labels, err)
	}
	if _, out := call("GET", "/containers/json?all=1", ""); !strings.Contains(out, made.ID) {
		t.Errorf("alice's list lacks her container: %s", out)
	}
	if bnet != "" {
		// Off the runtime's shared network: on her project's own.
		if _, ok := got.Networks[alice.Name+"_default"]; !ok || len(got.Networks) != 1 {
			t.Errorf("alice's docker run joins %v, want only %s_default", slices.Collect(maps.Keys(got.Networks)), alice.Name)
		}
	}
	refused("POST", "/containers/"+made.ID+"/rename?name="+bob.Name+"-app-1", "")
}

// dockerRelay checks the docker role's stream: a service of project
// with the role is answered by the Engine API; one without is refused.
func (ts *testServer) dockerRelay(ctx context.Context, project string) {
	t := ts.t
	t.Helper()
	relay, err := ts.clientOf(ts.caretakerToken(project)).OpenRelay(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	if _, err := relay.Open(ctx, api.StreamHeader{Op: api.OpDocker, Docker: &api.DockerOpen{Service: "db"}}); err == nil || !errdefs.IsPermissionDenied(err) {
		t.Errorf("a service without the docker role: %v", err)
	}
	st, err := relay.Open(ctx, api.StreamHeader{Op: api.OpDocker, Docker: &api.DockerOpen{Service: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, _ = io.WriteString(st, "GET /_ping HTTP/1.1\r\nHost: docker\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "OK" {
		t.Errorf("/_ping through the relay: %d %q", resp.StatusCode, body)
	}
}
