package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/cornus-dev/cornus/egress"
)

// Subcommand is the hidden subcommand that makes a cornus binary the
// child.
const Subcommand = "pac-sandbox"

// EnvMemory is how many bytes of address space the child may grow by
// (the parent sets it from Options.Memory).
const EnvMemory = "CORNUS_PAC_SANDBOX_MEMORY"

const (
	// defaultMemory bounds a child's growth: generous for the scripts it
	// holds (their runtimes, a few MiB each), small enough that a runaway
	// allocation ends the child long before it troubles the machine.
	defaultMemory = 1 << 30
	// maxScripts is how many compiled scripts a child keeps; the parent
	// loads an evicted one again.
	maxScripts = 64
)

// IsChild reports whether args (os.Args) start the child, for a test
// binary's TestMain: it has no subcommands.
func IsChild(args []string) bool { return len(args) == 2 && args[1] == Subcommand }

// Main is the child's life: bound its memory, then serve requests from
// stdin, answers to stdout, until stdin closes or ctx ends. environ gives
// EnvMemory.
func Main(ctx context.Context, environ []string) error {
	memory := uint64(defaultMemory)
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvMemory+"="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("%s=%q: want a positive number of bytes", EnvMemory, v)
			}
			memory = n
		}
	}
	if err := limitMemory(memory); err != nil {
		return fmt.Errorf("PAC sandbox: bound its memory: %w", err)
	}
	// The soft limit makes the collector work before the hard one is met.
	debug.SetMemoryLimit(int64(memory / 4 * 3))
	return serve(ctx, os.Stdin, os.Stdout)
}

// serve answers each request on a goroutine of its own (at most a few
// per core at once; reading waits meanwhile), in whatever order they end.
func serve(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lines{enc: json.NewEncoder(out)}
	if err := w.send(response{By: "ready"}); err != nil {
		return err
	}
	scripts := &cache{max: maxScripts, m: map[string]*entry{}}
	sem := make(chan struct{}, 4*runtime.GOMAXPROCS(0))
	var busy sync.WaitGroup
	reqs := make(chan request)
	errc := make(chan error, 1)
	go func() {
		dec := json.NewDecoder(in)
		for {
			var r request
			if err := dec.Decode(&r); err != nil {
				errc <- err
				return
			}
			select {
			case reqs <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			busy.Wait()
			if errors.Is(err, io.EOF) {
				return nil // the parent is done with us, or gone
			}
			return fmt.Errorf("PAC sandbox: read a request: %w", err)
		case r := <-reqs:
			sem <- struct{}{}
			busy.Add(1)
			go func() {
				defer func() { <-sem; busy.Done() }()
				_ = w.send(answer(scripts, r))
			}()
		}
	}
}

// answer does one request. A panic in the runtime answers deny (a load:
// an error); the child goes on.
func answer(scripts *cache, r request) (resp response) {
	resp.ID = r.ID
	defer func() {
		if p := recover(); p != nil {
			if r.Op == opLoad {
				resp = response{ID: r.ID, Err: fmt.Sprintf("PAC script: runtime panic: %v", p)}
			} else {
				resp = response{ID: r.ID, Route: egress.Deny, By: fmt.Sprintf("PAC error (deny): runtime panic: %v", p)}
			}
		}
	}()
	switch r.Op {
	case opLoad:
		if scripts.get(r.Key) != nil {
			return resp
		}
		p, err := egress.NewPAC(r.Script, egress.PACOptions{MyIP: r.MyIP, Deadline: r.Deadline, MaxHeapGrowth: r.MaxHeapGrowth})
		if err != nil {
			resp.Err = err.Error()
			return resp
		}
		scripts.put(r.Key, p)
	case opDecide:
		p := scripts.get(r.Key)
		if p == nil {
			resp.Unknown = true
			return resp
		}
		d := egress.Destination{Host: r.Host, Port: r.Port}
		if r.IP != "" {
			d.IP, _ = netip.ParseAddr(r.IP)
		}
		dec := p.Decide(d, r.Default)
		resp.Route, resp.By = dec.Route, dec.By
	default:
		resp.Err = fmt.Sprintf("PAC sandbox: unknown request %q", r.Op)
	}
	return resp
}

// lines writes responses, one line each, one at a time.
type lines struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (a *lines) send(r response) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.enc.Encode(r)
}

// cache holds the compiled scripts, the least recently used evicted past
// max.
type cache struct {
	mu   sync.Mutex
	max  int
	tick uint64
	m    map[string]*entry
}

type entry struct {
	pac  *egress.PAC
	used uint64
}

func (c *cache) get(key string) *egress.PAC {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil {
		return nil
	}
	c.tick++
	e.used = c.tick
	return e.pac
}

func (c *cache) put(key string, p *egress.PAC) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		var oldest string
		for k, e := range c.m {
			if oldest == "" || e.used < c.m[oldest].used {
				oldest = k
			}
		}
		delete(c.m, oldest)
	}
	c.tick++
	c.m[key] = &entry{pac: p, used: c.tick}
}
