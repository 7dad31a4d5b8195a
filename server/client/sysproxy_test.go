package client

import (
	"net/url"
	"strings"
	"testing"
)

// Locks down issue 27: macOS's proxy settings, as scutil --proxy prints
// them, become the egress end's proxy; a PAC file alone becomes a note.
func TestParseScutil(t *testing.T) {
	out := `<dictionary> {
  ExceptionsList : <array> {
    0 : *.local
    1 : 169.254/16
    2 : 10/8
    3 : intranet.example
  }
  FTPPassive : 1
  HTTPEnable : 1
  HTTPPort : 3128
  HTTPProxy : proxy.example
  HTTPSEnable : 1
  HTTPSPort : 8443
  HTTPSProxy : secure.example
  ProxyAutoConfigEnable : 0
}
`
	s := parseScutil(out)
	if s.cfg == nil {
		t.Fatal("no proxy read")
	}
	if s.cfg.HTTPProxy != "http://proxy.example:3128" || s.cfg.HTTPSProxy != "http://secure.example:8443" {
		t.Errorf("proxies %q %q", s.cfg.HTTPProxy, s.cfg.HTTPSProxy)
	}
	if want := "*.local,169.254.0.0/16,10.0.0.0/8,intranet.example"; s.cfg.NoProxy != want {
		t.Errorf("NoProxy %q, want %q", s.cfg.NoProxy, want)
	}
	if s.note() != "" {
		t.Errorf("note %q with a manual proxy", s.note())
	}
	p, err := s.cfg.ProxyFunc()(mustURL(t, "https://api.example"))
	if err != nil || p == nil || p.Host != "secure.example:8443" {
		t.Errorf("https://api.example goes via %v, %v", p, err)
	}
	if p, _ := s.cfg.ProxyFunc()(mustURL(t, "https://169.254.169.254")); p != nil {
		t.Errorf("an exception goes via %v", p)
	}

	pac := parseScutil("<dictionary> {\n  HTTPEnable : 0\n  ProxyAutoConfigEnable : 1\n  ProxyAutoConfigURLString : http://wpad.example/wpad.dat\n}\n")
	if pac.cfg != nil || !strings.Contains(pac.note(), "http://wpad.example/wpad.dat") || !strings.Contains(pac.note(), "HTTPS_PROXY") {
		t.Errorf("PAC only: cfg %v, note %q", pac.cfg, pac.note())
	}
	if off := parseScutil("<dictionary> {\n  HTTPEnable : 0\n  HTTPProxy : proxy.example\n}\n"); off.cfg != nil {
		t.Errorf("a disabled proxy was read: %v", off.cfg)
	}
}

// Locks down issue 27: Windows' Internet Settings, one proxy for all or
// one per scheme, their exceptions, and a PAC file alone as a note.
func TestParseWindowsProxy(t *testing.T) {
	s := parseWindowsProxy(1, "proxy.example:8080", "*.corp.example;10.*;192.168.*;<local>", "")
	if s.cfg == nil || s.cfg.HTTPProxy != "http://proxy.example:8080" || s.cfg.HTTPSProxy != "http://proxy.example:8080" {
		t.Fatalf("one proxy: %+v", s.cfg)
	}
	if want := "*.corp.example,10.0.0.0/8,192.168.0.0/16,localhost"; s.cfg.NoProxy != want {
		t.Errorf("NoProxy %q, want %q", s.cfg.NoProxy, want)
	}
	per := parseWindowsProxy(1, "http=web.example:80;https=tls.example:443;ftp=ftp.example:21", "", "")
	if per.cfg == nil || per.cfg.HTTPProxy != "http://web.example:80" || per.cfg.HTTPSProxy != "http://tls.example:443" {
		t.Errorf("per scheme: %+v", per.cfg)
	}
	if off := parseWindowsProxy(0, "proxy.example:8080", "", "http://wpad/wpad.dat"); off.cfg != nil || !strings.Contains(off.note(), "wpad") {
		t.Errorf("disabled with a PAC: cfg %v, note %q", off.cfg, off.note())
	}
	if socks := parseWindowsProxy(1, "socks=s.example:1080", "", ""); socks.cfg != nil {
		t.Errorf("a SOCKS-only proxy was read as HTTP: %+v", socks.cfg)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
