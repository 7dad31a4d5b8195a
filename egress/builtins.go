package egress

import (
	"net/netip"
	"strings"

	"github.com/dop251/goja"
)

// maxBuilt bounds the strings and arrays the script builds in one step
// of a native builtin: those run to the end before goja looks at an
// interrupt, so neither the deadline nor the heap watch can stop one huge
// allocation (a fatal out-of-memory, not a panic). The watch catches
// gradual growth.
const maxBuilt = 1 << 20

// maxGlob bounds shExpMatch's arguments: its match takes the product of
// their lengths, in Go, past any interrupt.
const maxGlob = 4096

// installBuiltins defines the standard PAC functions (pure: the only
// "DNS" is the destination's own IP, already known) and caps the
// allocating string and array builtins.
func installBuiltins(rt *goja.Runtime, vm *pacVM, o PACOptions) error {
	set := func(name string, fn any) { _ = rt.Set(name, fn) }
	set("shExpMatch", func(s, pattern string) bool {
		if len(s) > maxGlob || len(pattern) > maxGlob {
			panic(rt.NewTypeError("shExpMatch: arguments longer than %d", maxGlob))
		}
		return globMatch(pattern, s)
	})
	set("dnsDomainIs", func(host, domain string) bool {
		return strings.HasSuffix(strings.ToLower(host), strings.ToLower(domain))
	})
	set("isPlainHostName", func(host string) bool { return !strings.Contains(host, ".") })
	set("localHostOrDomainIs", func(host, hostdom string) bool {
		host, hostdom = strings.ToLower(host), strings.ToLower(hostdom)
		if host == hostdom {
			return true
		}
		return !strings.Contains(host, ".") && strings.HasPrefix(hostdom, host+".")
	})
	set("dnsDomainLevels", func(host string) int { return strings.Count(host, ".") })
	resolve := func(host string) (netip.Addr, bool) {
		if ip, err := netip.ParseAddr(host); err == nil {
			return ip.Unmap(), true
		}
		if d := vm.dest; d != nil && d.IP.IsValid() && strings.EqualFold(strings.TrimSuffix(host, "."), d.Host) {
			return d.IP, true
		}
		return netip.Addr{}, false
	}
	set("isResolvable", func(host string) bool { _, ok := resolve(host); return ok })
	set("dnsResolve", func(host string) goja.Value {
		if ip, ok := resolve(host); ok {
			return rt.ToValue(ip.String())
		}
		return goja.Null()
	})
	set("isInNet", func(host, pattern, mask string) bool {
		ip, ok := resolve(host)
		pat, err1 := netip.ParseAddr(pattern)
		m, err2 := netip.ParseAddr(mask)
		if !ok || err1 != nil || err2 != nil || !ip.Is4() || !pat.Is4() || !m.Is4() {
			return false
		}
		a, b, mm := ip.As4(), pat.As4(), m.As4()
		for i := range 4 {
			if a[i]&mm[i] != b[i]&mm[i] {
				return false
			}
		}
		return true
	})
	set("myIpAddress", func() string { return o.MyIP })
	// No binary types: no PAC needs binary data, and their constructors
	// allocate natively (new ArrayBuffer(1e12) is a fatal out-of-memory).
	for _, name := range [...]string{"ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array",
		"Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array",
		"Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"} {
		if err := rt.GlobalObject().Delete(name); err != nil {
			return err
		}
	}
	set("__maxBuilt", maxBuilt)
	_, err := rt.RunString(pacJS)
	return err
}

// pacJS is the date and time builtins (on the runtime's deterministic
// clock), __answer, and the caps on allocating builtins. A cap converts
// its arguments once and hands the native the converted values: a
// valueOf, toString or length getter asked twice could answer small, then
// huge. Where the native would read its input again (fill, concat), the
// cap is the whole builtin, in JavaScript, where the deadline reaches.
const pacJS = `
function __answer(f, u, h) { return String(f(u, h)); }
(function (max) {
  var S = String, N = Number, O = Object, floor = Math.floor;
  function big(what) { throw new RangeError(what + ": result too large"); }
  function toLen(v) { v = N(v); return v > 0 ? (v > 9007199254740991 ? 9007199254740991 : floor(v)) : 0; }
  function relIndex(v, len, dflt) {
    v = v === undefined ? dflt : N(v);
    if (v !== v) v = 0;
    v = v < 0 ? floor(-v) * -1 : floor(v);
    return v < 0 ? (len + v < 0 ? 0 : len + v) : (v > len ? len : v);
  }
  function wrap(proto, name, make) {
    var f = make(proto[name]);
    Object.defineProperty(proto, name, {value: f, writable: true, configurable: true, enumerable: false});
  }
  var sp = String.prototype, ap = Array.prototype;
  wrap(sp, "repeat", function (repeat) {
    return function repeat_(n) {
      var s = S(this), k = N(n);
      if (s.length * k > max) big("repeat");
      return repeat.call(s, k);
    };
  });
  ["padStart", "padEnd"].forEach(function (name) {
    wrap(sp, name, function (pad) {
      return function (n, fill) {
        var s = S(this), k = N(n);
        if (k > max) big(name);
        return pad.call(s, k, fill === undefined ? undefined : S(fill));
      };
    });
  });
  wrap(sp, "concat", function (concat) {
    return function () {
      var s = S(this), parts = [], total = s.length;
      for (var i = 0; i < arguments.length; i++) {
        parts[i] = S(arguments[i]);
        if ((total += parts[i].length) > max) big("concat");
      }
      return concat.apply(s, parts);
    };
  });
  // replace, replaceAll and RegExp's Symbol.replace: the replacement
  // (a function, or a string whose $& $1 $' and kin copy parts of the input)
  // is made here, match by match, and the result bounded as it grows.
  var ours = new WeakSet();
  function substitute(rep, m, pos, str, caps, groups) {
    var out = "", i = 0;
    while (i < rep.length) {
      var c = rep.charAt(i), d = rep.charAt(i + 1);
      if (c !== "$" || d === "") { out += c; i++; }
      else if (d === "$") { out += "$"; i += 2; }
      else if (d === "&") { out += m; i += 2; }
      else if (d === "\x60") { out += str.slice(0, pos); i += 2; }
      else if (d === "'") { out += str.slice(pos + m.length); i += 2; }
      else if (d >= "0" && d <= "9") {
        var e = rep.charAt(i + 2), n = N(d), nn = e >= "0" && e <= "9" ? n * 10 + N(e) : 0;
        if (nn >= 1 && nn <= caps.length) { out += caps[nn - 1] === undefined ? "" : caps[nn - 1]; i += 3; }
        else if (n >= 1 && n <= caps.length) { out += caps[n - 1] === undefined ? "" : caps[n - 1]; i += 2; }
        else { out += "$"; i++; }
      } else if (d === "<" && groups !== undefined) {
        var end = rep.indexOf(">", i);
        if (end < 0) { out += "$<"; i += 2; }
        else { var g = groups[rep.slice(i + 2, end)]; out += g === undefined ? "" : S(g); i = end + 1; }
      } else { out += "$"; i++; }
      if (out.length > max) big("replace");
    }
    return out;
  }
  function capped(s, r) {
    if (ours.has(r)) return r;
    var total = s.length, f;
    function add(out) { if ((total += out.length) > max) big("replace"); return out; }
    if (typeof r === "function") {
      f = function () { return add(S(r.apply(undefined, arguments))); };
    } else if ((r = S(r)).indexOf("$") < 0) {
      f = function () { return add(r); };
    } else {
      f = function () {
        var a = arguments, n = a.length, groups = typeof a[n - 1] === "object" ? a[n - 1] : undefined;
        var k = groups === undefined ? n : n - 1, caps = [];
        for (var i = 1; i < k - 2; i++) caps.push(a[i] === undefined ? undefined : S(a[i]));
        return add(substitute(r, S(a[0]), a[k - 2], a[k - 1], caps, groups));
      };
    }
    ours.add(f);
    return f;
  }
  ["replace", "replaceAll"].forEach(function (name) {
    wrap(sp, name, function (replace) {
      return function (pattern, r) { var s = S(this); return replace.call(s, pattern, capped(s, r)); };
    });
  });
  wrap(RegExp.prototype, Symbol.replace, function (replace) {
    return function (str, r) { var s = S(str); return replace.call(this, s, capped(s, r)); };
  });
  // join, and toString and toLocaleString through it: the parts become
  // strings here, once, so the native joins only strings it was shown.
  var join = ap.join;
  function joinCapped(o, sep, each) {
    var n = toLen(o.length);
    if (n > max) big("join");
    var total = n > 0 ? (n - 1) * sep.length : 0, parts = [];
    if (total > max) big("join");
    for (var i = 0; i < n; i++) {
      var e = o[i];
      parts[i] = e === undefined || e === null ? "" : S(each ? e.toLocaleString() : e);
      if ((total += parts[i].length) > max) big("join");
    }
    return join.call(parts, sep);
  }
  wrap(ap, "join", function () {
    return function join(sep) { return joinCapped(O(this), sep === undefined ? "," : S(sep), false); };
  });
  wrap(ap, "toLocaleString", function () {
    return function toLocaleString() { return joinCapped(O(this), ",", true); };
  });
  wrap(ap, "fill", function () {
    return function fill(v, start, end) {
      var o = O(this), n = toLen(o.length);
      if (n > max) big("fill");
      for (var i = relIndex(start, n, 0), e = relIndex(end, n, n); i < e; i++) o[i] = v;
      return o;
    };
  });
  wrap(ap, "concat", function () {
    var spreadable = Symbol.isConcatSpreadable, isArray = Array.isArray;
    return function concat() {
      var out = [], len = 0, items = [O(this)];
      for (var i = 0; i < arguments.length; i++) items.push(arguments[i]);
      for (var j = 0; j < items.length; j++) {
        var e = items[j], flag = e !== null && typeof e === "object" ? e[spreadable] : undefined;
        if (flag !== undefined ? !!flag : isArray(e)) {
          var n = toLen(e.length);
          if (len + n > max) big("concat");
          for (var k = 0; k < n; k++) if (k in e) out[len + k] = e[k];
          len += n;
        } else {
          if (len + 1 > max) big("concat");
          out[len++] = e;
        }
        out.length = len;
      }
      return out;
    };
  });
  // new Array(n), Array(n), Array.from(arrayLike) and, through
  // constructor, the species copies of map, filter, slice, splice.
  var OrigArray = Array;
  function checkLen(args) {
    if (args.length === 1 && typeof args[0] === "number" && args[0] > max) throw new RangeError("Array: too large");
  }
  var arrayProto = OrigArray.prototype;
  function hasInstance(x) { return arrayProto.isPrototypeOf(x); }
  Array = new Proxy(OrigArray, {
    construct: function (t, args, nt) { checkLen(args); return Reflect.construct(t, args, nt === Array ? t : nt); },
    apply: function (t, self, args) { checkLen(args); return Reflect.apply(t, self, args); },
    // goja's instanceof takes no proxy for a function
    get: function (t, k, r) { return k === Symbol.hasInstance ? hasInstance : Reflect.get(t, k, r); }
  });
  Object.defineProperty(ap, "constructor", {value: Array, writable: true, configurable: true, enumerable: false});
})(__maxBuilt);
delete __maxBuilt;
var __days = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
var __months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
function __now(args) {
  var gmt = args.length > 0 && args[args.length - 1] === "GMT";
  var d = new Date();
  return {gmt: gmt, n: gmt ? args.length - 1 : args.length,
    day: gmt ? d.getUTCDay() : d.getDay(), date: gmt ? d.getUTCDate() : d.getDate(),
    month: gmt ? d.getUTCMonth() : d.getMonth(), year: gmt ? d.getUTCFullYear() : d.getFullYear(),
    secs: gmt ? d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds()
              : d.getHours() * 3600 + d.getMinutes() * 60 + d.getSeconds()};
}
function __between(v, lo, hi) { return lo <= hi ? (v >= lo && v <= hi) : (v >= lo || v <= hi); }
function weekdayRange() {
  var t = __now(arguments);
  var a = __days.indexOf(String(arguments[0]).toUpperCase());
  var b = t.n > 1 ? __days.indexOf(String(arguments[1]).toUpperCase()) : a;
  if (a < 0 || b < 0) return false;
  return __between(t.day, a, b);
}
function timeRange() {
  var t = __now(arguments), v = [];
  for (var i = 0; i < t.n; i++) v.push(Number(arguments[i]));
  var hour = Math.floor(t.secs / 3600);
  if (t.n === 1 || (t.n === 2 && v[0] === v[1])) return hour === v[0];
  if (t.n === 2) return v[0] < v[1] ? (hour >= v[0] && hour < v[1]) : (hour >= v[0] || hour < v[1]);
  if (t.n === 4) return __between(t.secs, v[0] * 3600 + v[1] * 60, v[2] * 3600 + v[3] * 60 - 1);
  if (t.n === 6) return __between(t.secs, v[0] * 3600 + v[1] * 60 + v[2], v[3] * 3600 + v[4] * 60 + v[5]);
  return false;
}
function dateRange() {
  var t = __now(arguments), a = [];
  for (var i = 0; i < t.n; i++) a.push(arguments[i]);
  function kind(x) {
    if (typeof x === "string" && __months.indexOf(x.toUpperCase()) >= 0) return "m";
    var n = Number(x);
    return n > 31 ? "y" : "d";
  }
  function val(x, k) { return k === "m" ? __months.indexOf(String(x).toUpperCase()) : Number(x); }
  function key(parts, ks) {
    // a comparable number from the fields given: year, month, day
    var y = 0, m = 0, d = 0;
    for (var i = 0; i < parts.length; i++) {
      if (ks[i] === "y") y = parts[i]; else if (ks[i] === "m") m = parts[i]; else d = parts[i];
    }
    return y * 10000 + m * 100 + d;
  }
  if (t.n === 0) return false;
  var ks = a.map(kind), vs = a.map(function (x, i) { return val(x, ks[i]); });
  var half = t.n === 1 ? 1 : t.n / 2;
  if (t.n !== 1 && t.n % 2 !== 0) return false;
  var lo = vs.slice(0, half), hi = t.n === 1 ? lo : vs.slice(half);
  var lk = ks.slice(0, half);
  var cur = lk.map(function (k) { return k === "y" ? t.year : k === "m" ? t.month : t.date; });
  return __between(key(cur, lk), key(lo, lk), key(hi, lk));
}
`
