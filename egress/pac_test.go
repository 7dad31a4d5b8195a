package egress

import (
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// The caps on allocating builtins answer what the natives answer, for
// inputs within the bounds: a PAC behaves as in any runtime, bar the
// binary types it no longer has.
func TestPACCapsKeepSemantics(t *testing.T) {
	p, err := NewPAC(`function FindProxyForURL(u, h) { return "DIRECT"; }`, PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm, _ := p.pool.Get().(*pacVM)
	plain := goja.New()
	for _, expr := range []string{
		`"ab".repeat(3)`, `"ab".repeat(0)`, `String.prototype.repeat.call(12, 2)`, `"5".padStart(3, "0")`, `"5".padEnd(4)`, `"a".padStart(5, "xy")`,
		`"a".concat("b", 1, null, undefined)`, `[1, [2, 3], null, undefined, "x"].join("-")`, `[1, 2].join()`, `[].join()`,
		`String([1, [2, [3]]])`, `[1.5, "a", null].toLocaleString()`, `Array.prototype.join.call({length: 3, 0: "a", 2: "c"}, "+")`,
		`JSON.stringify([1, 2, 3, 4, 5].fill(0, 1, -1))`, `JSON.stringify(new Array(3).fill("x"))`, `JSON.stringify([1, 2, 3].fill(9, -2))`,
		`JSON.stringify([1, 2, 3].fill(7, NaN, 2))`, `JSON.stringify([1].concat([2, [3]], 4, [, 5]))`, `[1].concat([2, , 3]).length`,
		`JSON.stringify([].concat({length: 1, 0: "x"}))`, `(function(){ var o = {length: 2, 0: "a", 1: "b"}; o[Symbol.isConcatSpreadable] = true; return JSON.stringify([0].concat(o)); })()`,
		`"a.b.c".replace(".", "-")`, `"a.b.c".replace(/\./g, "-")`, `"a.b.c".replaceAll(".", "$&$&")`, `"John Smith".replace(/(\w+)\s(\w+)/, "$2, $1")`,
		`"abc".replace(/b/, "[$` + "`" + `|$'|$$|$0|$9|$10]")`, `"2020-01-02".replace(/(?<y>\d+)-(?<m>\d+)-(?<d>\d+)/, "$<d>/$<m>/$<y>|$<zz>|$<m")`,
		`"abcd".replace(/(b)(c)?/g, function (m, p1, p2, off, s) { return [m, p1, p2, off, s.length].join(":"); })`,
		`"aXbX".replace(/(?<x>X)/g, function () { return typeof arguments[arguments.length - 1]; })`,
		`"abc".replace(/(a)(b)(c)/, "$11|$01|$3")`, `/x/[Symbol.replace]("axbx", "y")`, `"xyz".replace("y", function (m, off) { return m + off; })`,
		`new Array(3).length`, `Array(2, 3).join()`, `Array.from({length: 2}).length`, `Array.from([1, 2], function (x) { return x * 2; }).join()`,
		`[].constructor === Array`, `[1, 2, 3].map(function (x) { return x + 1; }).join()`, `[1, 2, 3].filter(function (x) { return x > 1; }).join()`,
		`[1, 2, 3].slice(1).join()`, `Array.isArray(new Array(2))`, `[1, 2] instanceof Array`, `({}) instanceof Array`, `Array.isArray([])`, `typeof Uint8Array`,
	} {
		want, err := plain.RunString("String(" + expr + ")")
		if err != nil {
			t.Fatalf("%s in a plain runtime: %v", expr, err)
		}
		got, err := vm.rt.RunString("String(" + expr + ")")
		if err != nil {
			t.Errorf("%s in a PAC: %v", expr, err)
			continue
		}
		if expr == `typeof Uint8Array` {
			if got.String() != "undefined" {
				t.Errorf("a PAC has binary types: %s = %s", expr, got)
			}
			continue
		}
		if got.String() != want.String() {
			t.Errorf("%s = %q in a PAC, %q in a plain runtime", expr, got, want)
		}
	}
}

// The deadline counts the CPU time of the thread deciding, not the time
// it waits for a core: a run that stands still three deadlines long (as a
// thread on a loaded machine does, here blocked in a native that sleeps)
// still answers, until the generous real-time bound. (A real-time
// deadline denied a plain script the more often the more loaded the
// machine.)
func TestPACDeadlineIsCPUTime(t *testing.T) {
	if _, ok := threadCPUClock().now(); !ok {
		t.Skip("no thread CPU clock on this system: the deadline is real time")
	}
	p, err := NewPAC(`function FindProxyForURL(u, h) { return "DIRECT"; }`, PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm, _ := p.pool.Get().(*pacVM)
	_ = vm.rt.Set("standStill", func(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) })
	run := func(src string) (string, error) {
		v, err := p.run(vm.rt, func() (goja.Value, error) { return vm.rt.RunString(src) })
		if err != nil {
			return "", cleanErr(err)
		}
		return v.String(), nil
	}
	if got, err := run(`standStill(3 * 100); "answered"`); err != nil || got != "answered" {
		t.Fatalf("a run standing still past the CPU deadline: %q, %v; want an answer", got, err)
	}
	if _, err := run(`standStill(2100); "answered"`); err == nil || !strings.Contains(err.Error(), "no answer within 2s") {
		t.Fatalf("a run standing still past the real-time bound: %v, want no answer within 2s", err)
	}
	// The bound's interrupt is pending in vm now: it is not used again.
	vm, _ = p.pool.Get().(*pacVM)
	if vm == nil {
		vm, _ = p.newVM()
	}
	if _, err := run(`for (;;) {}`); err == nil || !strings.Contains(err.Error(), "of CPU time") {
		t.Fatalf("a busy loop: %v, want no answer within the CPU deadline", err)
	}
}

// A Go panic out of the runtime (not a JavaScript exception) is an
// error of the run, and the decision deny: no panics on input.
func TestPACRuntimePanicDenies(t *testing.T) {
	p, err := NewPAC(`function FindProxyForURL(u, h) { return "DIRECT"; }`, PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm, _ := p.pool.Get().(*pacVM)
	_ = vm.rt.Set("goPanic", func() { panic("a bug") })
	if _, err := p.run(vm.rt, func() (goja.Value, error) { return vm.rt.RunString(`goPanic()`) }); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("a Go panic in the runtime: %v", err)
	}
}
