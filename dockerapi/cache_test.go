package dockerapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// TestCacheFreshness: the read cache never hides a change. Reads right
// after the proxy's own writes are fresh at once; changes made behind its
// back (straight on the backend) show up once their event arrives.
func TestCacheFreshness(t *testing.T) {
	ts := newTestServer(t)
	state := func(ref string) string {
		status, body, _ := ts.do("GET", "/containers/"+ref+"/json", "")
		if status != 200 {
			return "missing"
		}
		var r struct{ State struct{ Status string } }
		_ = json.Unmarshal([]byte(body), &r)
		return r.State.Status
	}
	id := ts.create(ts.label+"-c", "")
	_ = state(id) // fill the cache
	if status, body, _ := ts.do("POST", "/containers/"+id+"/start", ""); status != 204 {
		t.Fatalf("start: %d %s", status, body)
	}
	if s := state(id); s != "running" {
		t.Fatalf("right after start through the proxy: %s", s)
	}
	// Behind the proxy's back: stop, then create, on the backend itself.
	if err := ts.b.Stop(context.Background(), id, backends.StopOptions{Timeout: new(time.Duration)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "external stop is seen", func() bool { return state(id) == "exited" })
	name := ts.label + "-ext"
	if _, err := ts.b.Create(context.Background(), backends.ContainerSpec{Name: name, App: appOf(testImage), Labels: map[string]string{"cornus.test": ts.label}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "external create is listed", func() bool {
		_, body, _ := ts.do("GET", "/containers/json?all=1", "")
		return strings.Contains(body, "/"+name+`"`)
	})
}

func eventually(t *testing.T, what string, f func() bool) {
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
