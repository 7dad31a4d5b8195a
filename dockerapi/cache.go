package dockerapi

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// stateCache answers container list and inspect from memory, the way an
// informer does: entries are dropped on every backend event (container
// events and network connect/disconnect), on every change this server
// makes itself and when a wait returns, and expire after ttl regardless,
// which bounds drift in what changes without an event (status text, health
// logs, a network connected to a stopped container behind our back).
// It is only used while the backend's event subscription is confirmed
// (EventOptions.Subscribed), so a backend without events, one that cannot
// confirm, or a broken stream reads through.
type stateCache struct {
	b   backends.Backend
	ttl time.Duration // <= 0: entries never expire by age
	off bool          // every read reaches the backend

	mu      sync.Mutex
	live    bool   // event subscription confirmed and connected
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

// cacheConfig is what the cache options set; nil ttl means cacheTTL.
type cacheConfig struct {
	ttl *time.Duration
	off bool
}

// WithReadCache turns the container read cache on (the default) or off;
// off, every list and inspect reaches the backend (to measure or rule out
// the cache: `CORNUS_DOCKERAPI_CACHE=off cornus daemon docker`).
func WithReadCache(on bool) Option { return func(c *config) { c.cache.off = !on } }

// WithCacheTTL sets how long a cached read may be served without an event
// (default 1s). A ttl <= 0 never expires entries, so only events and the
// server's own writes refresh them: tests use it to prove invalidation.
func WithCacheTTL(ttl time.Duration) Option { return func(c *config) { c.cache.ttl = &ttl } }

func newStateCache(b backends.Backend, cfg cacheConfig) *stateCache {
	c := &stateCache{b: b, ttl: cacheTTL, off: cfg.off, inspect: map[string]cachedInspect{}}
	if cfg.ttl != nil {
		c.ttl = *cfg.ttl
	}
	return c
}

// run keeps the cache fed by the backend's event stream until ctx ends,
// reconnecting after failures (reads go through while disconnected).
func (c *stateCache) run(ctx context.Context) {
	es, ok := c.b.(backends.EventSource)
	if !ok || c.off {
		return
	}
	for ctx.Err() == nil {
		sctx, cancel := context.WithCancel(ctx)
		events, errs := es.Events(sctx, backends.EventOptions{
			Networks: true, // connect/disconnect change a container's inspect
			// Live only from here: events before it could be missed.
			Subscribed: func() {
				if sctx.Err() == nil {
					c.setLive(true)
				}
			},
		})
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

// usable says whether an entry made at at in generation gen may be served.
// The caller holds mu.
func (c *stateCache) usable(at time.Time, gen uint64) bool {
	return c.live && gen == c.gen && (c.ttl <= 0 || time.Since(at) < c.ttl)
}

// listAll returns every container (running or not).
func (c *stateCache) listAll(ctx context.Context) ([]backends.Container, error) {
	if c.off {
		return c.b.List(ctx, backends.ListOptions{All: true})
	}
	c.mu.Lock()
	if l := c.list; l != nil && c.usable(l.at, l.gen) {
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
	if c.off {
		return c.b.Inspect(ctx, ref)
	}
	c.mu.Lock()
	if e, ok := c.inspect[ref]; ok && c.usable(e.at, e.gen) {
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
