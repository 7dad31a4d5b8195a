package spec

import (
	"strings"
	"testing"
)

// TestValidateHostName locks down security round 2: a hostname holding a
// line break became an lxc.hook.pre-start line in Incus's raw.lxc and ran
// as host root. Host and domain names are RFC 1123, at most 64 bytes.
func TestValidateHostName(t *testing.T) {
	long := strings.Repeat("a", 62) // with ".b", the kernel's 64 bytes
	for _, c := range []struct {
		hostname, domainname string
		bad                  string // "" = valid, else the field refused
	}{
		{hostname: "devbox", domainname: "example.internal"},
		{hostname: "cpp-dev"},
		{hostname: "h1.Example.COM"},
		{hostname: "0web"},
		{hostname: strings.Repeat("a", 63)},
		{hostname: "x\nlxc.hook.pre-start = /bin/sh -c 'id > /tmp/pwned'", bad: "hostname"},
		{hostname: "web\r", bad: "hostname"},
		{hostname: "web\x00", bad: "hostname"},
		{hostname: "my_db", bad: "hostname"},
		{hostname: "-web", bad: "hostname"},
		{hostname: "web-", bad: "hostname"},
		{hostname: "web..x", bad: "hostname"},
		{hostname: "web.", bad: "hostname"},
		{hostname: "a b", bad: "hostname"},
		{hostname: strings.Repeat("a", 64), bad: "hostname"},
		{hostname: long + ".b"},
		{hostname: long + ".bc", bad: "hostname"},
		{domainname: "example.test\nlxc.uts.name = host", bad: "domainname"},
	} {
		p := Project{Name: "p", Services: map[string]App{"web": {Image: "busybox", Hostname: c.hostname, Domainname: c.domainname}}}
		err := p.Validate()
		if c.bad == "" {
			if err != nil {
				t.Errorf("%q/%q refused: %v", c.hostname, c.domainname, err)
			}
			continue
		}
		want := "services.web." + c.bad + ": "
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "RFC 1123 host name: use dot-separated labels of letters, digits and '-'") {
			t.Errorf("%q/%q: want a problem at %s, got %v", c.hostname, c.domainname, want, err)
		}
	}
}
