package dockerapi

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// stateCache answers container list and inspect from memory, the way an
// informer does: entries are dropped on every backend event and on every
// change this server makes itself, and expire after ttl regardless, which
// bounds drift in what changes without an event (status text, health logs).
// It is only used while the backend's event stream is connected, so a
// backend without events (or a broken stream) reads through.
type stateCache struct {
	b   backends.Backend
	ttl time.Duration

	mu      sync.Mutex
	live    bool   // event stream connected
	gen     uint64 // bumped by every invalidation
	list    *cachedList
	inspect map[string]cachedInspect // by ID and by name
}

type cachedList struct {
	at  time.Time
	gen uint64
	cs  []backends.Container
}

type cachedInspect struct {
	at  time.Time
	gen uint64
	d   backends.ContainerDetails
}

const cacheTTL = time.Second

func newStateCache(b backends.Backend) *stateCache {
	return &stateCache{b: b, ttl: cacheTTL, inspect: map[string]cachedInspect{}}
}

// run keeps the cache fed by the backend's event stream until ctx ends,
// reconnecting after failures (reads go through while disconnected).
func (c *stateCache) run(ctx context.Context) {
	es, ok := c.b.(backends.EventSource)
	if !ok {
		return
	}
	for ctx.Err() == nil {
		sctx, cancel := context.WithCancel(ctx)
		events, errs := es.Events(sctx, backends.EventOptions{})
		c.setLive(true)
	drain:
		for {
			select {
			case _, ok := <-events:
				if !ok {
					break drain
				}
				c.invalidate()
			case <-errs:
				break drain
			case <-ctx.Done():
				break drain
			}
		}
		cancel()
		c.setLive(false)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *stateCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	c.gen++
	c.list, c.inspect = nil, map[string]cachedInspect{}
}

// invalidate forgets everything: events are rare next to reads, and
// dropping all is always safe.
func (c *stateCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.list = nil
	clear(c.inspect)
}

// listAll returns every container (running or not).
func (c *stateCache) listAll(ctx context.Context) ([]backends.Container, error) {
	c.mu.Lock()
	if l := c.list; c.live && l != nil && l.gen == c.gen && time.Since(l.at) < c.ttl {
		c.mu.Unlock()
		return slices.Clone(l.cs), nil
	}
	gen := c.gen
	c.mu.Unlock()
	cs, err := c.b.List(ctx, backends.ListOptions{All: true})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.live && c.gen == gen { // nothing changed while we fetched
		c.list = &cachedList{at: time.Now(), gen: gen, cs: slices.Clone(cs)}
	}
	c.mu.Unlock()
	return cs, nil
}

// inspectRef returns a container by exact ID or name.
func (c *stateCache) inspectRef(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	c.mu.Lock()
	if e, ok := c.inspect[ref]; c.live && ok && e.gen == c.gen && time.Since(e.at) < c.ttl {
		c.mu.Unlock()
		return e.d, nil
	}
	gen := c.gen
	c.mu.Unlock()
	d, err := c.b.Inspect(ctx, ref)
	if err != nil {
		return d, err
	}
	c.mu.Lock()
	if c.live && c.gen == gen {
		e := cachedInspect{at: time.Now(), gen: gen, d: d}
		c.inspect[d.ID] = e
		c.inspect[d.Name] = e
	}
	c.mu.Unlock()
	return d, nil
}
