package dockerapi

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// stateCache answers container list and inspect from memory, the way an
// informer does. It is only used while the backend's event subscription is
// confirmed (EventOptions.Subscribed), so a backend without events, one
// that cannot confirm, or a broken stream reads through. Then:
//   - it warms up: every container is inspected once, so the first
//     `docker compose ps` over hundreds of containers is served from memory;
//   - an event (container events, network connect/disconnect, health probe
//     execs) drops only the container it names; this server's own writes
//     and a returned wait do the same; entries otherwise stay (inspect
//     shows no text that ages);
//   - the list is dropped by any event and expires after ttl regardless,
//     since its status text ("Up 3 seconds") ages without events;
//   - concurrent misses of one reference share one backend call.
type stateCache struct {
	b   backends.Backend
	ttl time.Duration // list entries; <= 0: never expire by age
	off bool          // every read reaches the backend

	mu       sync.Mutex
	live     bool              // event subscription confirmed and connected
	epoch    uint64            // bumped when liveness changes: older fetches are void
	seq      uint64            // bumped by every invalidation
	allSeq   uint64            // seq of the last invalidation of everything
	dirty    map[string]uint64 // container ID → seq of its last invalidation, while fetches run
	fetching int
	list     *cachedList
	byID     map[string]backends.ContainerDetails
	names    map[string]string // container name → ID
	flights  map[string]*flight
}

type cachedList struct {
	at  time.Time
	seq uint64
	cs  []backends.Container
}

// flight is one backend inspect that concurrent misses wait for.
type flight struct {
	done chan struct{}
	d    backends.ContainerDetails
	err  error
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
	c := &stateCache{b: b, ttl: cacheTTL, off: cfg.off, dirty: map[string]uint64{},
		byID: map[string]backends.ContainerDetails{}, names: map[string]string{}, flights: map[string]*flight{}}
	if cfg.ttl != nil {
		c.ttl = *cfg.ttl
	}
	return c
}

// run keeps the cache fed by the backend's event stream until ctx ends,
// reconnecting after failures (reads go through while disconnected).
func (c *stateCache) run(ctx context.Context) {
	es, err := backends.Want[backends.EventSource](c.b, backends.FeatureEvents, "events")
	if err != nil || c.off {
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
					go c.warm(sctx)
				}
			},
		})
	drain:
		for {
			select {
			case e, ok := <-events:
				if !ok {
					break drain
				}
				c.invalidateID(e.ID)
			case <-errs: //nolint:errcheck // the stream ended, whatever its error: resubscribed below
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

// warmers bounds the warm-up's concurrent inspects, so it does not crowd
// out the daemon.
const warmers = 4

// warm inspects every container once the cache goes live.
func (c *stateCache) warm(ctx context.Context) {
	cs, err := c.listAll(ctx)
	if err != nil {
		return
	}
	sem := make(chan struct{}, warmers)
	var wg sync.WaitGroup
	for _, ct := range cs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, _ = c.inspectRef(ctx, ct.ID)
		}()
	}
	wg.Wait()
}

func (c *stateCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	c.epoch++
	c.forgetAll()
}

// invalidate forgets everything (a change whose container is unknown).
func (c *stateCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.allSeq = c.seq
	c.forgetAll()
}

// invalidateID forgets one container and the list; "" forgets everything.
func (c *stateCache) invalidateID(id string) {
	if id == "" {
		c.invalidate()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if c.fetching > 0 {
		c.dirty[id] = c.seq
	}
	c.list = nil
	if d, ok := c.byID[id]; ok {
		delete(c.byID, id)
		if c.names[d.Name] == id {
			delete(c.names, d.Name)
		}
	}
}

// forgetAll drops every entry; the caller holds mu.
func (c *stateCache) forgetAll() {
	c.list = nil
	clear(c.byID)
	clear(c.names)
}

// listAll returns every container (running or not).
func (c *stateCache) listAll(ctx context.Context) ([]backends.Container, error) {
	if c.off {
		return c.b.List(ctx, backends.ListOptions{All: true})
	}
	c.mu.Lock()
	if l := c.list; c.live && l != nil && l.seq == c.seq && (c.ttl <= 0 || time.Since(l.at) < c.ttl) {
		c.mu.Unlock()
		return slices.Clone(l.cs), nil
	}
	seq, epoch := c.seq, c.epoch
	c.mu.Unlock()
	cs, err := c.b.List(ctx, backends.ListOptions{All: true})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.live && c.epoch == epoch && c.seq == seq { // nothing changed while we fetched
		c.list = &cachedList{at: time.Now(), seq: seq, cs: slices.Clone(cs)}
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
	if !c.live {
		c.mu.Unlock()
		return c.b.Inspect(ctx, ref)
	}
	id := ref
	if named, ok := c.names[ref]; ok {
		id = named
	}
	if d, ok := c.byID[id]; ok {
		c.mu.Unlock()
		return d, nil
	}
	if f, ok := c.flights[ref]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.d, f.err
		case <-ctx.Done():
			return backends.ContainerDetails{}, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.flights[ref] = f
	c.fetching++
	seq, epoch := c.seq, c.epoch
	c.mu.Unlock()

	// Detached from the caller: others may be waiting on this fetch.
	f.d, f.err = c.b.Inspect(context.WithoutCancel(ctx), ref)

	c.mu.Lock()
	delete(c.flights, ref)
	c.fetching--
	if f.err == nil && c.live && c.epoch == epoch && c.allSeq <= seq && c.dirty[f.d.ID] <= seq {
		c.byID[f.d.ID] = f.d
		c.names[f.d.Name] = f.d.ID
	}
	if c.fetching == 0 {
		clear(c.dirty)
	}
	c.mu.Unlock()
	close(f.done)
	return f.d, f.err
}
