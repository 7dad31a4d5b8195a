package egress

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// rulesPolicy and pacPolicy say the same thing two ways.
var rulesPolicy = &spec.Egress{Rules: []spec.EgressRule{
	{Pattern: "blocked.example.com", Route: Deny},
	{Pattern: "*.corp.example", Route: Client},
	{Pattern: "api.example.com:443", Route: Client},
	{Pattern: "10.0.0.0/8", Route: Client},
	{Pattern: "192.168.1.7", Route: Deny},
	{Pattern: "*.gw.example:8443", Route: Gateway},
	{Pattern: "intranet", Route: Client},
}, Default: Cluster}

const pacScript = `
function FindProxyForURL(url, host) {
  if (host == "blocked.example.com") return "DENY";
  if (shExpMatch(host, "*.corp.example")) return "PROXY client; DIRECT";
  if (host == "api.example.com" && url.indexOf(":443/") > 0) return "CLIENT";
  if (isInNet(host, "10.0.0.0", "255.0.0.0")) return "PROXY proxy.corp:3128";
  if (host == "192.168.1.7") return "BLOCK";
  if (shExpMatch(host, "*.gw.example") && url.indexOf(":8443/") > 0) return "GATEWAY";
  if (isPlainHostName(host) && host == "intranet") return "PROXY client";
  return "DIRECT";
}`

func fiftyDestinations() []string {
	ds := []string{
		"blocked.example.com", "blocked.example.com:443", "a.corp.example", "x.y.corp.example:22", "corp.example",
		"api.example.com:443", "api.example.com:80", "api.example.com", "10.1.2.3", "10.255.0.1:5432",
		"11.0.0.1", "192.168.1.7", "192.168.1.7:80", "192.168.1.8", "svc.gw.example:8443",
		"svc.gw.example:443", "intranet", "intranet:80", "example.org", "[::1]:443",
	}
	for i := len(ds); i < 50; i++ {
		switch i % 3 {
		case 0:
			ds = append(ds, fmt.Sprintf("h%d.corp.example:%d", i, 1000+i))
		case 1:
			ds = append(ds, fmt.Sprintf("10.%d.%d.1", i, i))
		default:
			ds = append(ds, fmt.Sprintf("site%d.example.net", i))
		}
	}
	return ds
}

// Rules and the equivalent PAC decide the same on every destination, and
// the expected way.
func TestRulesAndPACAgree(t *testing.T) {
	rules, err := Compile(rulesPolicy, "egress", PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pac, err := Compile(&spec.Egress{Script: pacScript, Default: Cluster}, "egress", PACOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"blocked.example.com": Deny, "a.corp.example": Client, "corp.example": Cluster, "api.example.com:443": Client,
		"api.example.com:80": Cluster, "10.1.2.3": Client, "11.0.0.1": Cluster, "192.168.1.7:80": Deny,
		"svc.gw.example:8443": Gateway, "svc.gw.example:443": Cluster, "intranet": Client, "example.org": Cluster, "[::1]:443": Cluster,
	}
	for _, s := range fiftyDestinations() {
		d, err := ParseDestination(s)
		if err != nil {
			t.Fatal(err)
		}
		r, p := rules.Decide(d), pac.Decide(d)
		if r.Route != p.Route {
			t.Errorf("%s: rules say %s (%s), PAC says %s (%s)", s, r.Route, r.By, p.Route, p.By)
		}
		if w, ok := want[s]; ok && r.Route != w {
			t.Errorf("%s: %s (%s), want %s", s, r.Route, r.By, w)
		}
	}
}

// Hostile scripts are denied (a hang would fail the test after several
// seconds; how fast is not the point), and the next decision still works.
// Each would run unbounded without its cap or watch: the allocating
// builtins, backtracking regexes (regexp2 never sees goja's interrupt),
// an answer whose toString loops. (Security round 2, item 12.)
func TestHostilePACDenied(t *testing.T) {
	huge := `var s = "x".repeat(1 << 20), a = []; for (var i = 0; i < 4096; i++) a.push(s); `
	scripts := map[string]string{
		"infinite loop":         `while (true) {}`,
		"huge allocation":       `var a = []; while (true) a.push("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + a.length);`,
		"growing array":         `var a = [1]; for (;;) a = a.concat(a, a, a, a, a, a, a, a, a);`,
		"doubling string":       `var s = "xxxxxxxx"; for (;;) s = s + s;`,
		"huge string":           `return "x".repeat(1e10);`,
		"repeat 2**30":          `return "x".repeat(Math.pow(2, 30));`,
		"repeat asks twice":     `var n = 0; "x".repeat({valueOf: function () { n++; return 2; }}); return n == 1 ? "DENY" : "DIRECT";`,
		"padStart":              `return "x".padStart(Math.pow(2, 30), "y");`,
		"huge array":            `return new Array(1e9).join("x");`,
		"constructor array":     `return new ([].constructor)(1e9).length;`,
		"array from length":     `return Array.from({length: 1e9}).length;`,
		"species array":         `var a = []; a.length = 4e9; return a.map(function (x) { return x; }).length;`,
		"fill holes":            `var a = []; a.length = 4e9; return a.fill(0).length;`,
		"join shared":           huge + `return a.join("");`,
		"toString shared":       huge + `return a + "";`,
		"concat shared":         huge + `return "".concat.apply("", a);`,
		"replace expansion":     `var s = "x".repeat(1 << 20); return s.replace(/x/g, s);`,
		"replace $&":            `var s = "x".repeat(1 << 20); return s.replace(/.*/, "$&".repeat(4000));`,
		"ArrayBuffer 1e12":      `return new ArrayBuffer(1e12);`,
		"typed array 1e12":      `return new Float64Array(1e12);`,
		"backtracking backref":  `if (/^(a+)+\1$/.test("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")) return "DIRECT"; return "CLIENT";`,
		"backtracking lookhead": `for (;;) if (/^(?=(a|aa)+$)/.test("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")) return "DIRECT";`,
		"long glob":             `return shExpMatch("a".repeat(1 << 20), "*a".repeat(1 << 19) + "b") ? "DIRECT" : "CLIENT";`,
		"answer loops":          `return {toString: function () { for (;;) {} }};`,
		"deep recursion":        `function f(n) { return f(n + 1) + 1; } return f(0);`,
		"throws":                `throw new Error("boom");`,
		"require":               `return require("fs").readFileSync("/etc/passwd");`,
	}
	d, _ := ParseDestination("example.com:443")
	for name, body := range scripts {
		t.Run(name, func(t *testing.T) {
			p, err := NewPAC("function FindProxyForURL(u, h) { "+body+" }", PACOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := decideWithin(t, p, d); got.Route != Deny {
				t.Fatalf("%s (%s), want deny", got.Route, got.By)
			}
		})
	}
	if _, err := NewPAC(`while (true) {}`, PACOptions{}); err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("a script that loops at load: %v", err)
	}
	if _, err := NewPAC(`var x = 1;`, PACOptions{}); err == nil || !strings.Contains(err.Error(), "FindProxyForURL") {
		t.Fatalf("a script without FindProxyForURL: %v", err)
	}
}

// decideWithin is p.Decide(d), failing the test when it hangs.
func decideWithin(t *testing.T, p Decider, d Destination) Decision {
	t.Helper()
	got := make(chan Decision, 1)
	go func() { got <- p.Decide(d, Cluster) }()
	select {
	case dec := <-got:
		return dec
	case <-time.After(20 * time.Second):
		t.Fatalf("no decision for %s within 20s", d)
		return Decision{}
	}
}

// The PAC sees only a deterministic clock and random source, and no DNS
// beyond the destination's known IP.
func TestPACDeterministic(t *testing.T) {
	monday := time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)
	p, err := NewPAC(`function FindProxyForURL(u, h) {
		return [weekdayRange("MON", "FRI", "GMT"), weekdayRange("SAT", "GMT"), timeRange(9, 17, "GMT"), timeRange(18, 19, "GMT"),
		        dateRange("NOV", "GMT"), dateRange(2026, "GMT"), dateRange(1, "DEC", "GMT"), Math.random(), new Date().getTime(),
		        dnsResolve(h), dnsResolve("other.example"), isResolvable(h), myIpAddress(), dnsDomainLevels("a.b.c"),
		        localHostOrDomainIs("www", "www.example.com"), dnsDomainIs("a.example.com", ".example.com")].join(",");
	}`, PACOptions{Now: func() time.Time { return monday }, MyIP: "10.9.8.7"})
	if err != nil {
		t.Fatal(err)
	}
	d := Destination{Host: "db.internal", Port: 5432}
	d.IP, _ = ParseAddrForTest("10.1.2.3")
	vm, _ := p.pool.Get().(*pacVM)
	vm.dest = &d
	res, err := vm.answer(nil, vm.find, vm.rt.ToValue("x"), vm.rt.ToValue(d.Host))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(res.String(), ",")
	want := []string{"true", "false", "true", "false", "true", "true", "false", "", fmt.Sprint(monday.UnixMilli()), "10.1.2.3", "", "true", "10.9.8.7", "2", "true", "true"}
	for i := range want {
		if i == 7 {
			continue // Math.random: checked for repeatability below
		}
		if got[i] != want[i] {
			t.Errorf("builtin %d = %q, want %q (all: %v)", i, got[i], want[i], got)
		}
	}
	again, _ := NewPAC(`function FindProxyForURL(u, h) { return String(Math.random()); }`, PACOptions{})
	other, _ := NewPAC(`function FindProxyForURL(u, h) { return String(Math.random()); }`, PACOptions{})
	a, b := again.Decide(d, Cluster).By, other.Decide(d, Cluster).By
	if a != b {
		t.Errorf("Math.random differs between runtimes: %s vs %s", a, b)
	}
}

func TestDecideFrom(t *testing.T) {
	for in, want := range map[string]string{
		"DIRECT": Cluster, "DENY": Deny, "BLOCK": Deny, "CLIENT": Client, "cluster": Cluster, "GATEWAY; DIRECT": Gateway,
		"PROXY client": Client, "PROXY gateway": Gateway, "PROXY cluster": Cluster, "PROXY proxy.corp:3128; DIRECT": Client,
		"SOCKS5 127.0.0.1:1080": Client, "": "default", "WHATEVER": "default", "  direct  ; PROXY client": Cluster, "PROXY": "default",
	} {
		if got := decideFrom(in, "default"); got.Route != want {
			t.Errorf("%q → %s, want %s", in, got.Route, want)
		}
	}
}

func TestRuleErrors(t *testing.T) {
	for _, r := range []spec.EgressRule{
		{Pattern: "*.x", Route: "gateway:https://gw.example"}, {Pattern: "", Route: Client}, {Pattern: "a b", Route: Client},
		{Pattern: "10.0.0.0/33", Route: Client}, {Pattern: "x:notaport", Route: Client}, {Pattern: "x", Route: "somewhere"},
	} {
		if _, err := Compile(&spec.Egress{Rules: []spec.EgressRule{r}}, "egress", PACOptions{}); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{{"*.corp.example", "a.b.corp.example", true}, {"*.corp.example", "corp.example", false}, {"*", "", true},
		{"a?c", "abc", true}, {"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false}, {"", "", true}} {
		if globMatch(c.p, c.s) != c.ok {
			t.Errorf("globMatch(%q, %q) != %v", c.p, c.s, c.ok)
		}
	}
}

// A decision is Explicit when its rule names the destination with no
// wildcard: the client dials its own loopback only for those (item 13e).
func TestDecisionExplicit(t *testing.T) {
	for pattern, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:5432": true, "intranet": true, "[::1]:80": true, "127.0.0.0/8": true, "127.0.0.1/32": true,
		"fe80::/64": true, "169.254.169.254": true, "*": false, "*.corp.example": false, "local?ost": false, "0.0.0.0/0": false,
		"10.0.0.0/8": false, "::/0": false, "0.0.0.0/8:80": true,
	} {
		p, err := Compile(&spec.Egress{Rules: []spec.EgressRule{{Pattern: pattern, Route: Client}}, Default: Deny}, "egress", PACOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d := destinationFor(t, pattern)
		got := p.Decide(d)
		if got.Route != Client || got.Explicit != want {
			t.Errorf("%s for %s: %+v, want client, explicit %v", pattern, d, got, want)
		}
	}
	p, _ := Compile(&spec.Egress{Default: Client}, "egress", PACOptions{})
	if got := p.Decide(Destination{Host: "localhost", Port: 80}); got.Explicit {
		t.Errorf("the default names nothing: %+v", got)
	}
}

// destinationFor is a destination pattern matches.
func destinationFor(t *testing.T, pattern string) Destination {
	t.Helper()
	s := strings.NewReplacer("*", "x", "?", "h").Replace(pattern)
	if i := strings.Index(s, "/"); i >= 0 {
		rest := s[i:]
		s = s[:i]
		if j := strings.LastIndex(rest, ":"); j > 0 {
			s += rest[j:]
		}
	}
	if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		s = "[" + s + "]"
	}
	d, err := ParseDestination(s)
	if err != nil {
		t.Fatalf("%s: %v", pattern, err)
	}
	return d
}

// Routed names the services that may use a route, and counts a PAC
// script as any route without compiling it (a script that would not
// even parse is still "routed").
func TestRouted(t *testing.T) {
	p := spec.Project{Services: map[string]spec.App{
		"rules":   {Egress: &spec.Egress{Default: Cluster, Rules: []spec.EgressRule{{Pattern: "*.corp", Route: Client}}}},
		"def":     {Egress: &spec.Egress{Default: Client}},
		"pac":     {Egress: &spec.Egress{Script: "function FindProxyForURL( {"}},
		"none":    {Egress: &spec.Egress{Default: Cluster}},
		"nothing": {},
	}}
	got, err := Routed(p, Client)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"def", "pac", "rules"}; !slices.Equal(got, want) {
		t.Fatalf("Routed = %v, want %v", got, want)
	}
}
