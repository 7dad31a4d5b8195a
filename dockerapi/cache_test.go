package dockerapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/spec"
)

// TestCacheFreshness: the read cache never hides a change. Reads right
// after the proxy's own writes are fresh at once; changes made behind its
// back (straight on the backend: stop, create, network connect and
// disconnect) show up once their event arrives. Entries never expire here,
// so only invalidation can make these pass (hardening issue, item 7).
func TestCacheFreshness(t *testing.T) {
	ts := newTestServer(t, WithCacheTTL(0))
	ts.awaitLive()
	id := ts.create(ts.label+"-c", "")
	_ = ts.state(id) // fill the cache
	if status, body, _ := ts.do("POST", "/containers/"+id+"/start", ""); status != 204 {
		t.Fatalf("start: %d %s", status, body)
	}
	if s := ts.state(id); s != "running" {
		t.Fatalf("right after start through the proxy: %s", s)
	}
	// Behind the proxy's back: connect and disconnect (events of the
	// network, not the container), stop, then create, on the backend itself.
	ctx := context.Background()
	net := ts.network("extra")
	nc := ts.b
	if err := nc.Connect(ctx, net, id, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "external connect is seen", func() bool { return ts.networks(id)[net] })
	if err := nc.Disconnect(ctx, net, id, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "external disconnect is seen", func() bool { return !ts.networks(id)[net] })
	if err := ts.b.Stop(ctx, id, backends.StopOptions{Timeout: new(time.Duration)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "external stop is seen", func() bool { return ts.state(id) == "exited" })
	name := ts.label + "-ext"
	cs, err := backends.Resolve(backends.ResolveInput{Name: name, App: appOf(testImage), Labels: map[string]string{"cornus.test": ts.label}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.b.Create(ctx, cs); err != nil {
		t.Fatal(err)
	}
	eventually(t, "external create is listed", func() bool {
		_, body, _ := ts.do("GET", "/containers/json?all=1", "")
		return strings.Contains(body, "/"+name+`"`)
	})
}

// TestCacheWait: once POST /containers/{id}/wait answers, list and inspect
// show the exit even when no event arrived (here none ever does), since
// clients such as `docker run` and compose read state right after.
func TestCacheWait(t *testing.T) {
	ts := newTestServerOver(t, func(b backends.Backend) backends.Backend {
		return eventFilter{Backend: b.(*dockerhost.Backend), confirm: true}
	}, WithCacheTTL(0))
	ts.awaitLive()
	id := ts.create(ts.label+"-w", "")
	if status, body, _ := ts.do("POST", "/containers/"+id+"/start", ""); status != 204 {
		t.Fatalf("start: %d %s", status, body)
	}
	if s := ts.state(id); s != "running" {
		t.Fatalf("after start: %s", s)
	}
	if err := ts.b.Kill(context.Background(), id, spec.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if status, body, _ := ts.do("POST", "/containers/"+id+"/wait", ""); status != 200 || !strings.Contains(body, `"StatusCode":137`) {
		t.Fatalf("wait: %d %s", status, body)
	}
	if s := ts.state(id); s != "exited" {
		t.Fatalf("inspect right after wait: %s", s)
	}
	if _, body, _ := ts.do("GET", "/containers/json?all=1", ""); !strings.Contains(body, `"State":"exited"`) {
		t.Fatalf("list right after wait: %s", body)
	}
}

// TestCacheReadsThrough: with the cache off, or before the backend has
// confirmed its event subscription, every read reaches the backend — here
// no event ever arrives, so anything cached would stay stale.
func TestCacheReadsThrough(t *testing.T) {
	for _, tc := range []struct {
		name    string
		confirm bool
		opts    []Option
	}{
		{"cache off", true, []Option{WithReadCache(false), WithCacheTTL(0)}},
		{"subscription unconfirmed", false, []Option{WithCacheTTL(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServerOver(t, func(b backends.Backend) backends.Backend {
				return eventFilter{Backend: b.(*dockerhost.Backend), confirm: tc.confirm}
			}, tc.opts...)
			id := ts.create(ts.label+"-r", "")
			if status, body, _ := ts.do("POST", "/containers/"+id+"/start", ""); status != 204 {
				t.Fatalf("start: %d %s", status, body)
			}
			time.Sleep(200 * time.Millisecond) // give a subscription time to (wrongly) go live
			if s := ts.state(id); s != "running" {
				t.Fatalf("after start: %s", s)
			}
			if err := ts.b.Stop(context.Background(), id, backends.StopOptions{Timeout: new(time.Duration)}); err != nil {
				t.Fatal(err)
			}
			if s := ts.state(id); s != "exited" {
				t.Fatalf("right after an external stop: %s", s)
			}
		})
	}
}

// eventFilter shows the server a backend whose event stream carries no
// events, and whose subscription is confirmed only if confirm is set.
type eventFilter struct {
	*dockerhost.Backend // every other method, optional ones included
	confirm             bool
}

func (f eventFilter) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	if !f.confirm {
		o.Subscribed = nil
	}
	in, errs := f.Backend.Events(ctx, o)
	out := make(chan backends.Event)
	go func() {
		defer close(out)
		for range in {
		}
	}()
	return out, errs
}

// awaitLive waits until the server's cache has its event subscription, so
// a test of invalidation does not pass by reading through.
func (ts *testServer) awaitLive() {
	ts.t.Helper()
	eventually(ts.t, "the read cache goes live", func() bool {
		c := ts.srv.cache
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.live
	})
}

// state is a container's State.Status through the proxy ("missing" if
// inspect fails).
func (ts *testServer) state(ref string) string {
	status, body, _ := ts.do("GET", "/containers/"+ref+"/json", "")
	if status != 200 {
		return "missing"
	}
	var r struct{ State struct{ Status string } }
	_ = json.Unmarshal([]byte(body), &r)
	return r.State.Status
}

// networks are the networks a container's inspect through the proxy names.
func (ts *testServer) networks(ref string) map[string]bool {
	_, body, _ := ts.do("GET", "/containers/"+ref+"/json", "")
	var r struct {
		NetworkSettings struct{ Networks map[string]json.RawMessage }
	}
	_ = json.Unmarshal([]byte(body), &r)
	out := map[string]bool{}
	for n := range r.NetworkSettings.Networks {
		out[n] = true
	}
	return out
}

// network creates a labelled network on the backend and returns its name;
// it is removed when the test ends, after the test's containers.
func (ts *testServer) network(key string) string {
	ts.t.Helper()
	ctx := context.Background()
	n, err := ts.b.EnsureNetwork(ctx, backends.NetworkSpec{Project: ts.label, Key: key})
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() {
		cs, _ := ts.b.List(ctx, backends.ListOptions{All: true, Labels: map[string]string{"cornus.test": ts.label}})
		for _, c := range cs {
			_ = ts.b.Remove(ctx, c.ID, backends.RemoveOptions{Force: true, Volumes: true})
		}
		if err := ts.b.RemoveNetwork(ctx, n.ID); err != nil && !errdefs.IsNotFound(err) {
			ts.t.Errorf("cleanup network %s: %v", n.Name, err)
		}
	})
	return n.Name
}

func eventually(t testing.TB, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func appOf(image string) spec.App {
	return spec.App{Name: "ext", Image: image, Command: spec.Command{"sleep", "30"}}
}

// TestCacheWarmPerContainer (issue 17): a proxy that goes live inspects
// every container once, so the first `docker compose ps` over hundreds is
// served from memory; an event drops only the container it names, so a
// busy container does not empty the cache for all others.
func TestCacheWarmPerContainer(t *testing.T) {
	first := newTestServer(t, WithCacheTTL(0))
	ids := []string{first.create(first.label+"-a", ""), first.create(first.label+"-b", ""), first.create(first.label+"-c", "")}
	ts := newTestServer(t, WithCacheTTL(0)) // goes live with the three already there
	ts.awaitLive()
	cached := func(id string) bool {
		c := ts.srv.cache
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.byID[id]
		return ok
	}
	eventually(t, "warm-up inspects every container", func() bool { return cached(ids[0]) && cached(ids[1]) && cached(ids[2]) })
	if err := ts.b.Kill(context.Background(), ids[0], spec.SIGKILL); err != nil && !errdefs.IsConflict(err) {
		t.Fatal(err)
	}
	if err := ts.b.Start(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the started container's entry is dropped", func() bool { return !cached(ids[0]) })
	if !cached(ids[1]) || !cached(ids[2]) {
		t.Fatal("an event for one container dropped the others")
	}
	if s := ts.state(ids[0]); s != "running" {
		t.Fatalf("after an external start: %s", s)
	}
}
