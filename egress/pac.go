package egress

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// PACOptions bound and feed a PAC script.
type PACOptions struct {
	// Now is the clock weekdayRange, dateRange, timeRange and Date see;
	// nil: the current time truncated to the minute, so the three hops
	// deciding within a minute agree. A Runner's process keeps its own.
	Now func() time.Time
	// MyIP is what myIpAddress() answers (default 127.0.0.1).
	MyIP string
	// Deadline bounds the CPU time of one decision (default 100 ms, at
	// most WallBound); past it the answer is deny. A decision also ends
	// after WallBound of real time, however loaded the machine.
	Deadline time.Duration
	// MaxHeapGrowth bounds what one decision may allocate (default 64 MiB).
	MaxHeapGrowth uint64
	// Runner, when set, compiles and runs the script in another process
	// (the server's sandbox: a tenant's script that crashes its runtime
	// must not take the server down). Nil: in this process.
	Runner Runner
}

// A Runner compiles PAC scripts somewhere else than this process.
type Runner interface {
	// Load compiles script with o (its Runner ignored) and checks it
	// defines FindProxyForURL, as NewPAC does.
	Load(script string, o PACOptions) (Decider, error)
}

// A Decider decides for one compiled PAC script: *PAC in this process,
// or a Runner's handle. Any error, timeout or runaway decides deny.
type Decider interface {
	Decide(d Destination, def string) Decision
}

var _ Decider = (*PAC)(nil)

// PAC is a compiled PAC script. It is safe for concurrent use: each
// decision runs on a runtime of its own from a pool.
type PAC struct {
	prog *goja.Program
	o    PACOptions
	pool sync.Pool
}

// maxScript bounds a PAC file.
const maxScript = 1 << 20

// withDefaults is o with its zero fields defaulted, as NewPAC uses it.
func (o PACOptions) withDefaults() PACOptions {
	if o.Deadline <= 0 {
		o.Deadline = defaultDeadline
	}
	o.Deadline = min(o.Deadline, WallBound)
	if o.MaxHeapGrowth == 0 {
		o.MaxHeapGrowth = 64 << 20
	}
	if o.MyIP == "" {
		o.MyIP = "127.0.0.1"
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().Truncate(time.Minute) }
	}
	return o
}

// regexOnce sets regexp2's match timeout before goja compiles the first
// pattern (it is read when a pattern compiles, and only goja, only here,
// uses regexp2 in cornus).
var regexOnce sync.Once

// NewPAC compiles script and checks that it defines FindProxyForURL.
func NewPAC(script string, o PACOptions) (*PAC, error) {
	if len(script) > maxScript {
		return nil, fmt.Errorf("PAC script of %d bytes: at most %d", len(script), maxScript)
	}
	o = o.withDefaults()
	o.Runner = nil
	regexOnce.Do(func() { regexp2.DefaultMatchTimeout = regexTimeout })
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
	rt *goja.Runtime
	// answer calls FindProxyForURL and makes its result a string inside
	// the runtime (a result's toString is the script's code too).
	answer goja.Callable
	find   goja.Value
	dest   *Destination // the decision's destination, for dnsResolve
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
	answer, ok := goja.AssertFunction(rt.Get("__answer"))
	if !ok {
		return nil, errors.New("PAC runtime: no __answer")
	}
	vm.answer = answer
	if _, err := p.run(rt, func() (goja.Value, error) { return rt.RunProgram(p.prog) }); err != nil {
		return nil, fmt.Errorf("PAC script: %w", cleanErr(err))
	}
	find := rt.Get("FindProxyForURL")
	if _, ok := goja.AssertFunction(find); !ok {
		return nil, errors.New("PAC script: it does not define function FindProxyForURL(url, host)")
	}
	vm.find = find
	return vm, nil
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
	res, err := p.run(vm.rt, func() (goja.Value, error) {
		return vm.answer(goja.Undefined(), vm.find, vm.rt.ToValue(url), vm.rt.ToValue(d.Host))
	})
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
	if len(by) > 200 {
		by = strings.ToValidUTF8(by[:200], "") + "…"
	}
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
