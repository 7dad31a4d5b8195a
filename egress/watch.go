package egress

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The bounds every run of a PAC script shares.
const (
	defaultDeadline = 100 * time.Millisecond
	// WallBound ends any run after this much real time, whatever CPU it
	// used: generous, so that a loaded machine (the thread waiting for a
	// core) denies no plain script.
	WallBound = 2 * time.Second
	// regexTimeout stops a backtracking match: goja runs the patterns RE2
	// cannot (backreferences, lookaround) in regexp2, whose matcher never
	// sees goja's interrupt. goja reads a timed-out match as "no match";
	// past WallBound (with regexp2's coarse clock's slack), the run it cut
	// short is denied whatever it answers, so no hop decides on it.
	regexTimeout = WallBound + 500*time.Millisecond
	// Most runs take microseconds: the watch looks only at the ones
	// still running after watchAfter, then every watchEvery.
	watchAfter = time.Millisecond
	watchEvery = 2 * time.Millisecond
)

// run runs f on rt under a watch: past the CPU deadline, past WallBound
// or when the heap grows past the bound, rt is interrupted and run
// returns the cause. A panic out of the runtime is an error too. The goroutine keeps its thread meanwhile, so the
// thread's CPU clock is this run's.
func (p *PAC) run(rt *goja.Runtime, f func() (goja.Value, error)) (v goja.Value, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := &watch{rt: rt, o: &p.o, clock: threadCPUClock(), start: time.Now()}
	w.cpu0, w.cpuOK = w.clock.now()
	w.mu.Lock() // the first tick may come before AfterFunc returns
	w.timer = time.AfterFunc(watchAfter, w.tick)
	w.mu.Unlock()
	func() {
		// goja re-panics what is not a JavaScript exception (a bug of its
		// own): the run is an error, no crash.
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("PAC runtime panic: %v", r)
			}
		}()
		v, err = f()
	}()
	if cause := w.stop(); cause != nil {
		// Interrupted, or the interrupt came as f returned: either way the
		// run is over its bound, and a runtime with an interrupt pending
		// must not be reused.
		return nil, cause
	}
	return v, err
}

// watch is one run's bounds.
type watch struct {
	rt    *goja.Runtime
	o     *PACOptions
	clock cpuClock
	cpu0  time.Duration
	cpuOK bool
	start time.Time
	timer *time.Timer

	mu       sync.Mutex
	ended    bool
	cause    error
	heapBase uint64 // at the first tick
}

func (w *watch) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if w.cause = w.over(); w.cause != nil {
		w.ended = true
		w.rt.Interrupt(w.cause)
		return
	}
	w.timer.Reset(watchEvery)
}

// over is why the run must end now, or nil.
func (w *watch) over() error {
	wall := time.Since(w.start)
	if wall >= WallBound {
		return fmt.Errorf("no answer within %v", WallBound)
	}
	used := wall
	if cpu, ok := w.clock.now(); ok && w.cpuOK {
		used = cpu - w.cpu0
	}
	if used >= w.o.Deadline {
		return fmt.Errorf("no answer within %v of CPU time", w.o.Deadline)
	}
	heap := heapBytes()
	if w.heapBase == 0 {
		w.heapBase = heap
	} else if heap > w.heapBase+w.o.MaxHeapGrowth {
		return fmt.Errorf("allocated more than %d MiB", w.o.MaxHeapGrowth>>20)
	}
	return nil
}

// stop ends the watch: the cause if it interrupted the run, or if the
// run took WallBound (a regexp2 match that timed out returns "no match"
// as the run goes on, and must decide nothing).
func (w *watch) stop() error {
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
	if w.cause == nil && time.Since(w.start) >= WallBound {
		w.cause = fmt.Errorf("no answer within %v", WallBound)
	}
	return w.cause
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

func heapBytes() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}
