package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// clientOf is an HTTP client that sends every request (the bench uses the
// host "d") to srv.
func clientOf(srv *httptest.Server) *http.Client {
	addr := srv.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}}}
}

// daemon answers inspect with a health log that grows by one probe every
// `every` requests, like a container with a healthcheck under churn.
type daemon struct {
	mu     sync.Mutex
	served int
	every  int
	last   string // the last answer served
}

func (d *daemon) answer() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.served++
	var log []string
	for i := range d.served/d.every + 1 {
		log = append(log, fmt.Sprintf(`{"Start":"probe %d"}`, i))
	}
	d.last = fmt.Sprintf(`{"Id":"c1","State":{"Status":"running","Health":{"Status":"healthy","Log":[%s]}}}`, strings.Join(log, ","))
	return d.last
}

func (d *daemon) lastAnswer() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

func serve(answer func() string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, answer()) }))
}

var inspectProbe = probe{"inspect", func(int) string { return "/containers/c1/json" },
	func(b []byte) (string, string, error) { s, err := canonInspect(b); return s, "", err }}

// A proxy whose cache ignores events answers fast and stale: the row must
// count its answers as wrong and fail (issue item 7: a fast wrong answer
// cannot win a row).
func TestAlternateFailsAStaleProxy(t *testing.T) {
	d := &daemon{every: 5}
	dockerd := serve(d.answer)
	defer dockerd.Close()
	frozen := d.answer()
	proxy := serve(func() string { return frozen })
	defer proxy.Close()

	r := alternate(clientOf(dockerd), clientOf(proxy), inspectProbe, 100)
	if r.differ < 90 {
		t.Fatalf("a frozen proxy differed %d times in 100, want nearly all", r.differ)
	}
	if !strings.Contains(r.example, "State.Health.Log") {
		t.Errorf("first difference %q, want it to name State.Health.Log", r.example)
	}
	if proxyRow("inspect", r) {
		t.Error("proxyRow held a row of stale answers")
	}
}

// A proxy that is right as of dockerd's previous answer (an event still on
// its way) is no wrong answer: dockerd may change between two requests.
func TestAlternateAcceptsAnAnswerOneChangeBehind(t *testing.T) {
	d := &daemon{every: 3}
	d.answer()
	dockerd := serve(d.answer)
	defer dockerd.Close()
	proxy := serve(d.lastAnswer)
	defer proxy.Close()

	r := alternate(clientOf(dockerd), clientOf(proxy), inspectProbe, 100)
	if r.differ != 0 {
		t.Fatalf("a proxy one answer behind differed %d times: %s", r.differ, r.example)
	}
	if !proxyRow("inspect", r) {
		t.Error("proxyRow failed a row of right answers")
	}
}

// dockerd 20.10 returns what a create left empty as given; the proxy names
// its meaning. Neither counts as a difference; a real one does.
func TestCanonInspectNormalizesDefaults(t *testing.T) {
	dockerd, err := canonInspect([]byte(`{"Id":"c1","HostConfig":{"NetworkMode":"default","RestartPolicy":{"Name":""}},"ResolvConfPath":"/var/lib/docker/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := canonInspect([]byte(`{"Id":"c1","HostConfig":{"NetworkMode":"bridge","RestartPolicy":{"Name":"no"}},"ResolvConfPath":""}`))
	if err != nil {
		t.Fatal(err)
	}
	if dockerd != proxy {
		t.Errorf("equivalent answers differ: %s", firstDifference(dockerd, proxy))
	}
	wrong, _ := canonInspect([]byte(`{"Id":"c1","HostConfig":{"NetworkMode":"bridge","RestartPolicy":{"Name":"always"}}}`))
	if d := firstDifference(dockerd, wrong); !strings.Contains(d, "HostConfig.RestartPolicy.Name") {
		t.Errorf("first difference %q, want HostConfig.RestartPolicy.Name", d)
	}
}

// The list check holds the bench's own containers to agreement; another
// user's container changing meanwhile is kept apart.
func TestCanonListSplitsOthersContainers(t *testing.T) {
	own := func(l map[string]string) bool { return l["cornus.bench"] == "proxy" }
	list := func(mineState, otherState string) (string, string) {
		m, o, err := canonList([]byte(fmt.Sprintf(`[
			{"Id":"bbbbbbbbbbbbbbbb","Names":["/other"],"State":%q,"Labels":{}},
			{"Id":"aaaaaaaaaaaaaaaa","Names":["/mine"],"State":%q,"Labels":{"cornus.bench":"proxy"}}]`, otherState, mineState)), own)
		if err != nil {
			t.Fatal(err)
		}
		return m, o
	}
	m1, o1 := list("running", "exited")
	m2, o2 := list("running", "removing")
	if m1 != m2 || o1 == o2 {
		t.Errorf("another's change should only show in the others' part: mine %v, others %v", m1 == m2, o1 == o2)
	}
	m3, _ := list("exited", "exited")
	if d := firstDifference(m1, m3); !strings.Contains(d, "aaaaaaaaaaaa.State") {
		t.Errorf("first difference %q, want aaaaaaaaaaaa.State", d)
	}
}
