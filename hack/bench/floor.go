package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// floor is the daemon's own cost of the bench project: the Engine API
// calls up -d and down cannot avoid (network, then create+start per
// container; stop+remove per container, then the network), straight to
// dockerd with every container in parallel and nothing else — no
// listing, inspecting, labels to read or output to print.
type floor struct {
	c       *http.Client // dockerd's socket
	api     string       // "/v1.41"
	image   string
	project string
	n       int
}

// floorRun is what one floor up brought up, and when its calls ran.
type floorRun struct {
	network         string
	ids             []string
	createNetwork   span
	creates, starts []span
}

// span is when one API call began and ended.
type span struct{ start, end time.Time }

// up creates the network, then creates and starts every container at once.
func (f floor) up() floorRun {
	var net struct{ Id string }
	r := floorRun{ids: make([]string, f.n), creates: make([]span, f.n), starts: make([]span, f.n)}
	r.createNetwork.start = time.Now()
	f.call(http.MethodPost, "/networks/create", map[string]any{
		"Name": f.project + "_default", "Labels": map[string]string{"cornus.bench": f.project},
	}, http.StatusCreated, &net)
	r.createNetwork.end = time.Now()
	r.network = net.Id
	f.parallel(func(i int) {
		svc := fmt.Sprintf("s%d", i)
		var c struct{ Id string }
		r.creates[i].start = time.Now()
		f.call(http.MethodPost, "/containers/create?name="+url.QueryEscape(fmt.Sprintf("%s-%s-1", f.project, svc)), map[string]any{
			"Image":      f.image,
			"Cmd":        []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done"},
			"Labels":     map[string]string{"cornus.bench": f.project},
			"HostConfig": map[string]any{"NetworkMode": f.project + "_default"},
			"NetworkingConfig": map[string]any{"EndpointsConfig": map[string]any{
				f.project + "_default": map[string]any{"Aliases": []string{svc}},
			}},
		}, http.StatusCreated, &c)
		r.ids[i] = c.Id
		r.creates[i].end = time.Now()
		r.starts[i].start = r.creates[i].end
		f.call(http.MethodPost, "/containers/"+c.Id+"/start", nil, http.StatusNoContent, nil)
		r.starts[i].end = time.Now()
	})
	return r
}

// down stops and removes every container at once, then the network, and
// returns when each container's stop and remove ran, and the network's
// removal.
func (f floor) down(r floorRun) (stops, removes []span, network span) {
	stops, removes = make([]span, f.n), make([]span, f.n)
	f.parallel(func(i int) {
		stops[i].start = time.Now()
		f.call(http.MethodPost, "/containers/"+r.ids[i]+"/stop?t=10", nil, http.StatusNoContent, nil)
		stops[i].end = time.Now()
		removes[i].start = stops[i].end
		f.call(http.MethodDelete, "/containers/"+r.ids[i]+"?v=1", nil, http.StatusNoContent, nil)
		removes[i].end = time.Now()
	})
	network.start = time.Now()
	f.call(http.MethodDelete, "/networks/"+r.network, nil, http.StatusNoContent, nil)
	network.end = time.Now()
	return stops, removes, network
}

// clean force-removes whatever a failed earlier run left.
func (f floor) clean() {
	q := url.QueryEscape(fmt.Sprintf(`{"label":["cornus.bench=%s"]}`, f.project))
	var cs []struct{ Id string }
	f.call(http.MethodGet, "/containers/json?all=1&filters="+q, nil, http.StatusOK, &cs)
	for _, c := range cs {
		f.call(http.MethodDelete, "/containers/"+c.Id+"?force=1&v=1", nil, http.StatusNoContent, nil)
	}
	var ns []struct{ Id string }
	f.call(http.MethodGet, "/networks?filters="+q, nil, http.StatusOK, &ns)
	for _, n := range ns {
		f.call(http.MethodDelete, "/networks/"+n.Id, nil, http.StatusNoContent, nil)
	}
}

// parallel runs each for every container at once; a failure in one
// (fail panics) ends the bench from the caller's goroutine, where the
// deferred cleanups run.
func (f floor) parallel(each func(i int)) {
	var wg sync.WaitGroup
	failed := make([]any, f.n)
	for i := range f.n {
		wg.Go(func() {
			defer func() { failed[i] = recover() }()
			each(i)
		})
	}
	wg.Wait()
	for _, r := range failed {
		if r != nil {
			panic(r)
		}
	}
}

// call sends one request and fails the bench unless it gets want.
func (f floor) call(method, path string, body any, want int, out any) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			fail(err)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, "http://d"+f.api+path, rd)
	if err != nil {
		fail(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.c.Do(req)
	if err != nil {
		fail(fmt.Errorf("floor %s %s: %w", method, path, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(resp.Body)
		fail(fmt.Errorf("floor %s %s: %s %s", method, path, resp.Status, msg))
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			fail(fmt.Errorf("floor %s %s: %w", method, path, err))
		}
	}
}
