package egress

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// PACOptions bound and feed a PAC script.
type PACOptions struct {
	// Now is the clock weekdayRange, dateRange, timeRange and Date see;
	// nil: the current time truncated to the minute, so the three hops
	// deciding within a minute agree.
	Now func() time.Time
	// MyIP is what myIpAddress() answers (default 127.0.0.1).
	MyIP string
	// Deadline bounds one decision (default 100 ms); past it the answer
	// is deny.
	Deadline time.Duration
	// MaxHeapGrowth bounds what one decision may allocate (default 64 MiB).
	MaxHeapGrowth uint64
}

// PAC is a compiled PAC script. It is safe for concurrent use: each
// decision runs on a runtime of its own from a pool.
type PAC struct {
	prog *goja.Program
	o    PACOptions
	pool sync.Pool
}

// maxScript bounds a PAC file.
const maxScript = 1 << 20

// NewPAC compiles script and checks that it defines FindProxyForURL.
func NewPAC(script string, o PACOptions) (*PAC, error) {
	if len(script) > maxScript {
		return nil, fmt.Errorf("PAC script of %d bytes: at most %d", len(script), maxScript)
	}
	if o.Deadline <= 0 {
		o.Deadline = 100 * time.Millisecond
	}
	if o.MaxHeapGrowth == 0 {
		o.MaxHeapGrowth = 64 << 20
	}
	if o.MyIP == "" {
		o.MyIP = "127.0.0.1"
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().Truncate(time.Minute) }
	}
	prog, err := goja.Compile("pac.js", script, true)
	if err != nil {
		return nil, fmt.Errorf("PAC script: %w", err)
	}
	p := &PAC{prog: prog, o: o}
	vm, err := p.newVM()
	if err != nil {
		return nil, err
	}
	p.pool.Put(vm)
	return p, nil
}

// pacVM is one sandboxed runtime with the script loaded.
type pacVM struct {
	rt   *goja.Runtime
	find goja.Callable
	dest *Destination // the decision's destination, for dnsResolve
}

func (p *PAC) newVM() (*pacVM, error) {
	rt := goja.New()
	rt.SetMaxCallStackSize(512)
	rt.SetTimeSource(p.o.Now)
	rng := rand.New(rand.NewPCG(1, 2)) // deterministic Math.random
	rt.SetRandSource(rng.Float64)
	vm := &pacVM{rt: rt}
	if err := installBuiltins(rt, vm, p.o); err != nil {
		return nil, err
	}
	done := p.guard(rt)
	_, err := rt.RunProgram(p.prog)
	done()
	if err != nil {
		return nil, fmt.Errorf("PAC script: %w", cleanErr(err))
	}
	fn, ok := goja.AssertFunction(rt.Get("FindProxyForURL"))
	if !ok {
		return nil, errors.New("PAC script: it does not define function FindProxyForURL(url, host)")
	}
	vm.find = fn
	return vm, nil
}

// guard interrupts rt past the deadline or when the heap grows past the
// bound (the interrupt carries the cause); done stops it.
func (p *PAC) guard(rt *goja.Runtime) (done func()) {
	stop := make(chan struct{})
	var once sync.Once
	timer := time.AfterFunc(p.o.Deadline, func() {
		rt.Interrupt(fmt.Errorf("no answer within %v", p.o.Deadline))
	})
	// Most decisions take microseconds: watch the heap only for the
	// ones that run longer.
	watch := time.AfterFunc(time.Millisecond, func() {
		base := heapBytes()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if heapBytes() > base+p.o.MaxHeapGrowth {
					rt.Interrupt(fmt.Errorf("allocated more than %d MiB", p.o.MaxHeapGrowth>>20))
					return
				}
			}
		}
	})
	return func() {
		once.Do(func() {
			timer.Stop()
			watch.Stop()
			close(stop)
		})
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

func heapBytes() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// Decide runs FindProxyForURL for d; any error, timeout or runaway
// allocation decides deny.
func (p *PAC) Decide(d Destination, def string) Decision {
	vm, _ := p.pool.Get().(*pacVM)
	if vm == nil {
		var err error
		if vm, err = p.newVM(); err != nil {
			return Decision{Route: Deny, By: "PAC error: " + err.Error()}
		}
	}
	vm.dest = &d
	url := "https://" + d.String() + "/"
	if d.Port == 80 {
		url = "http://" + d.Host + "/"
	}
	done := p.guard(vm.rt)
	res, err := vm.find(goja.Undefined(), vm.rt.ToValue(url), vm.rt.ToValue(d.Host))
	done()
	if err != nil {
		// An interrupted runtime may be mid-anything: drop it.
		return Decision{Route: Deny, By: "PAC error (deny): " + cleanErr(err).Error()}
	}
	vm.dest = nil
	p.pool.Put(vm)
	return decideFrom(res.String(), def)
}

func cleanErr(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if e, ok := ie.Value().(error); ok {
			return e
		}
	}
	var se *goja.StackOverflowError
	if errors.As(err, &se) {
		return errors.New("recursion too deep")
	}
	return err
}

// decideFrom maps a FindProxyForURL answer to a route: the first
// directive counts. DIRECT → cluster; DENY/BLOCK → deny; CLIENT, CLUSTER,
// GATEWAY and PROXY client|gateway|cluster → that route; PROXY (or
// SOCKS, HTTPS) host:port → client; empty or unknown → the default.
func decideFrom(answer, def string) Decision {
	first, _, _ := strings.Cut(answer, ";")
	first = strings.TrimSpace(first)
	by := "PAC: " + first
	f := strings.Fields(first)
	if len(f) == 0 {
		return Decision{Route: def, By: "PAC: empty answer, default"}
	}
	switch kw := strings.ToUpper(f[0]); kw {
	case "DIRECT":
		return Decision{Route: Cluster, By: by}
	case "DENY", "BLOCK":
		return Decision{Route: Deny, By: by}
	case "CLIENT", "CLUSTER", "GATEWAY":
		return Decision{Route: strings.ToLower(kw), By: by}
	case "PROXY", "SOCKS", "SOCKS4", "SOCKS5", "HTTP", "HTTPS":
		if len(f) < 2 {
			return Decision{Route: def, By: by + ": no proxy named, default"}
		}
		switch target := strings.ToLower(f[1]); target {
		case Client, Gateway, Cluster:
			return Decision{Route: target, By: by}
		}
		return Decision{Route: Client, By: by}
	}
	return Decision{Route: def, By: by + ": unknown, default"}
}
