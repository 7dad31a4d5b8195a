package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/egress"
)

// handle is one script loaded through the sandbox: an egress.Decider.
type handle struct {
	s *Sandbox
	// load is its load request, sent again to a child that lacks it.
	load request
}

var _ egress.Decider = (*handle)(nil)

func (h *handle) loadOn(c *child) error {
	r := h.load
	r.ID = h.s.nextID.Add(1)
	resp, err := c.call(r)
	if err != nil {
		return err
	}
	if resp.Err != "" {
		return errors.New(resp.Err)
	}
	return nil
}

// Decide asks the child, deny when none answers: the sandbox down, the
// child killed past the deadline, or dead twice.
func (h *handle) Decide(d egress.Destination, def string) egress.Decision {
	r := request{Op: opDecide, Key: h.load.Key, Host: d.Host, Port: d.Port, Default: def}
	if d.IP.IsValid() {
		r.IP = d.IP.String()
	}
	minute := time.Now().Truncate(time.Minute)
	if dec, ok := h.s.answers.get(r, minute); ok {
		return dec
	}
	var err error
	for try := 0; try < 2; try++ {
		var c *child
		if c, err = h.s.child(); err != nil {
			break
		}
		var resp response
		if resp, err = h.decideOn(c, r); err == nil {
			dec := egress.Decision{Route: resp.Route, By: resp.By}
			if !strings.HasPrefix(dec.By, "PAC error") && time.Now().Truncate(time.Minute).Equal(minute) {
				h.s.answers.put(r, minute, dec)
			}
			return dec
		}
		// A child that died under this decision may have died of another
		// script: try once more. A timeout is this script's own.
		if !errors.Is(err, errDied) {
			break
		}
	}
	return egress.Decision{Route: egress.Deny, By: "PAC error (deny): " + err.Error()}
}

func (h *handle) decideOn(c *child, r request) (response, error) {
	r.ID = h.s.nextID.Add(1)
	resp, err := c.call(r)
	if err == nil && resp.Unknown {
		if err := h.loadOn(c); err != nil {
			return response{}, err
		}
		r.ID = h.s.nextID.Add(1)
		resp, err = c.call(r)
	}
	switch {
	case err != nil:
		return response{}, err
	case resp.Err != "":
		return response{}, fmt.Errorf("PAC sandbox: %s", resp.Err)
	case resp.Unknown:
		return response{}, errors.New("PAC sandbox: the script was evicted as it loaded")
	}
	switch resp.Route {
	case egress.Client, egress.Gateway, egress.Cluster, egress.Deny:
		return resp, nil
	}
	return response{}, fmt.Errorf("PAC sandbox: answered route %q", resp.Route)
}

// answers remembers the child's clean answers for the minute they were
// given in: a PAC sees the clock to the minute only, so within it the
// same question has the same answer, and asking again costs a round trip
// to the child. Errors are not kept: they may pass (a crash of another
// script, the heap watch seeing another decision's garbage).
type answers struct {
	mu sync.Mutex
	m  map[answerKey]cached
}

type answerKey struct {
	key, host, ip, def string
	port               int
}

type cached struct {
	minute time.Time
	dec    egress.Decision
}

// maxAnswers bounds the memory: past it the map starts over.
const maxAnswers = 8192

func keyOf(r request) answerKey {
	return answerKey{key: r.Key, host: r.Host, ip: r.IP, def: r.Default, port: r.Port}
}

func (a *answers) get(r request, minute time.Time) (egress.Decision, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.m[keyOf(r)]
	if !ok || !e.minute.Equal(minute) {
		return egress.Decision{}, false
	}
	return e.dec, true
}

func (a *answers) put(r request, minute time.Time, dec egress.Decision) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil || len(a.m) >= maxAnswers {
		a.m = map[answerKey]cached{}
	}
	a.m[keyOf(r)] = cached{minute: minute, dec: dec}
}
