package backendtest

import (
	"regexp"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// stdinReader reads its stdin to the end, then says so in /tmp/eof.
const stdinReader = "cat > /tmp/in; echo eof > /tmp/eof; trap 'exit 0' TERM; while true; do sleep 0.2; done"

// inspect is the app's one container, inspected.
func (x *env) inspect(app string) backends.ContainerDetails {
	x.t.Helper()
	d, err := x.b.Inspect(x.ctx, x.one(app).ID)
	if err != nil {
		x.t.Fatalf("inspect %s: %v", app, err)
	}
	return d
}

// waitTrapped waits for the app's /tmp/trapped: its signal trap is set.
func (x *env) waitTrapped(app string) {
	x.t.Helper()
	x.eventually(app+"'s trap is set", func() string {
		if out, code := x.sh(app, "test -f /tmp/trapped"); code != 0 {
			return errf("exit %d %s", code, out)
		}
		return ""
	})
}

// checkResolvConf fails unless a line of the app's /etc/resolv.conf
// matches re.
func (x *env) checkResolvConf(app, re string) {
	x.t.Helper()
	rc := x.mustSh(app, "cat /etc/resolv.conf")
	if !regexp.MustCompile("(?m)" + re).MatchString(rc) {
		x.t.Fatalf("resolv.conf has no line matching %s:\n%s", re, rc)
	}
}

// checkOwner fails unless stat's format (%u or %g) of path is 1000, the
// uid and gid the cases give.
func (x *env) checkOwner(path, format string) {
	x.t.Helper()
	const want = "1000"
	if got := x.mustSh("app", "stat -c '"+format+"' "+path); got != want {
		x.t.Fatalf("%s: stat %s = %s, want %s", path, format, got, want)
	}
}

// limits is the app's resource limits, made when missing.
func limits(a *spec.App) *spec.ResourceLimits {
	if a.Resources == nil {
		a.Resources = &spec.Resources{}
	}
	if a.Resources.Limits == nil {
		a.Resources.Limits = &spec.ResourceLimits{}
	}
	return a.Resources.Limits
}

// eventuallyWithin is eventually with its own bound.
func (x *env) eventuallyWithin(bound time.Duration, what string, check func() string) {
	x.t.Helper()
	deadline := time.Now().Add(bound)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("%s: %s", what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// address is the IPv4 address of the app's container on one of its
// networks.
func (x *env) address(app string) string {
	x.t.Helper()
	for _, ep := range x.inspect(app).Networks {
		if ep.IPAddress != "" {
			return ep.IPAddress
		}
	}
	x.t.Fatalf("%s has no address: %+v", app, x.inspect(app).Networks)
	return ""
}

// httpGet is the shell command that fetches / from addr (host:port) with
// busybox nc: its wget crashes in some containers.
func httpGet(addr string) string { return "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 " + addr }

// eventuallyServes waits until from fetches a page holding want from addr.
func (x *env) eventuallyServes(from, addr, want string) {
	x.t.Helper()
	x.eventually(from+" reaches "+addr, func() string {
		if out, code := x.sh(from, httpGet(addr)); code != 0 || !strings.Contains(out, want) {
			return errf("exit %d: %s", code, out)
		}
		return ""
	})
}
