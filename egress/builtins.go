package egress

import (
	"net/netip"
	"strings"

	"github.com/dop251/goja"
)

// maxBuilt bounds strings and arrays the script builds in one step: the
// heap watchdog catches gradual growth, this a single huge allocation.
const maxBuilt = 1 << 20

// installBuiltins defines the standard PAC functions (pure: the only
// "DNS" is the destination's own IP, already known) and caps the
// allocating string and array builtins.
func installBuiltins(rt *goja.Runtime, vm *pacVM, o PACOptions) error {
	set := func(name string, fn any) { _ = rt.Set(name, fn) }
	set("shExpMatch", func(s, pattern string) bool { return globMatch(pattern, s) })
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
	set("__maxBuilt", maxBuilt)
	_, err := rt.RunString(pacJS)
	return err
}

// pacJS is the date and time builtins (on the runtime's deterministic
// clock) and the caps on allocating builtins.
const pacJS = `
(function () {
  var max = __maxBuilt;
  var repeat = String.prototype.repeat;
  String.prototype.repeat = function (n) {
    if (this.length * n > max) throw new RangeError("repeat: result too large");
    return repeat.call(this, n);
  };
  ["padStart", "padEnd"].forEach(function (name) {
    var orig = String.prototype[name];
    String.prototype[name] = function (n, s) {
      if (n > max) throw new RangeError(name + ": result too large");
      return orig.call(this, n, s);
    };
  });
  var OrigArray = Array;
  Array = new Proxy(OrigArray, {
    construct: function (t, args) {
      if (args.length === 1 && typeof args[0] === "number" && args[0] > max) throw new RangeError("Array: too large");
      return Reflect.construct(t, args);
    },
    apply: function (t, self, args) {
      if (args.length === 1 && typeof args[0] === "number" && args[0] > max) throw new RangeError("Array: too large");
      return Reflect.apply(t, self, args);
    }
  });
})();
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
