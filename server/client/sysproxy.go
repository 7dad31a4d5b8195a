package client

import (
	"bufio"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// systemProxyConfig is this machine's own proxy settings where the system
// keeps them outside the environment (macOS: scutil --proxy; Windows: the
// Internet Settings in the registry), with a note when they name a PAC
// file, which the egress end does not run. Nil: none.
type systemProxyConfig struct {
	cfg *httpproxy.Config
	pac string // the PAC file's URL, when the system names one
}

// note is what to tell the developer about these settings, or "".
func (s systemProxyConfig) note() string {
	if s.pac == "" || s.cfg != nil {
		return ""
	}
	return fmt.Sprintf("this machine's proxy is set by a PAC file (%s), which the egress end does not run: "+
		"egress leaving from here goes direct; set HTTPS_PROXY (and NO_PROXY) to send it through a proxy", s.pac)
}

// parseScutil reads `scutil --proxy` (macOS's effective proxy settings):
// the HTTP and HTTPS proxies where enabled, the exceptions, and the PAC
// file's URL where enabled.
func parseScutil(out string) systemProxyConfig {
	kv := map[string]string{}
	var exceptions []string
	inExceptions := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if inExceptions {
			if line == "}" {
				inExceptions = false
				continue
			}
			if _, v, ok := strings.Cut(line, " : "); ok {
				exceptions = append(exceptions, scutilException(v))
			}
			continue
		}
		k, v, ok := strings.Cut(line, " : ")
		if !ok {
			continue
		}
		if k == "ExceptionsList" && strings.HasPrefix(v, "<array>") {
			inExceptions = true
			continue
		}
		kv[k] = v
	}
	var s systemProxyConfig
	proxy := func(scheme string) string {
		host, port := kv[scheme+"Proxy"], kv[scheme+"Port"]
		if kv[scheme+"Enable"] != "1" || host == "" {
			return ""
		}
		if port != "" {
			return "http://" + host + ":" + port
		}
		return "http://" + host
	}
	if h, hs := proxy("HTTP"), proxy("HTTPS"); h != "" || hs != "" {
		s.cfg = &httpproxy.Config{HTTPProxy: h, HTTPSProxy: hs, NoProxy: strings.Join(exceptions, ",")}
	}
	if kv["ProxyAutoConfigEnable"] == "1" {
		s.pac = kv["ProxyAutoConfigURLString"]
	}
	return s
}

// scutilException turns macOS's short network form (169.254/16) into a
// CIDR NO_PROXY understands; other entries (*.local, hosts) pass as they
// are.
func scutilException(v string) string {
	addr, bits, ok := strings.Cut(v, "/")
	if !ok || strings.ContainsAny(addr, ":*") {
		return v
	}
	parts := strings.Split(addr, ".")
	for len(parts) < 4 {
		parts = append(parts, "0")
	}
	p, err := netip.ParsePrefix(strings.Join(parts, ".") + "/" + bits)
	if err != nil {
		return v
	}
	return p.String()
}

// parseWindowsProxy reads Windows' Internet Settings: ProxyEnable,
// ProxyServer ("host:port", or per scheme "http=h:p;https=h:p") and
// ProxyOverride ("*.corp;10.*;<local>", semicolons), and AutoConfigURL.
func parseWindowsProxy(enable uint64, server, override, autoConfig string) systemProxyConfig {
	s := systemProxyConfig{pac: autoConfig}
	if enable == 0 || server == "" {
		return s
	}
	cfg := &httpproxy.Config{}
	if !strings.Contains(server, "=") {
		cfg.HTTPProxy, cfg.HTTPSProxy = "http://"+server, "http://"+server
	} else {
		for _, part := range strings.Split(server, ";") {
			scheme, hostport, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch strings.ToLower(scheme) {
			case "http":
				cfg.HTTPProxy = "http://" + hostport
			case "https":
				cfg.HTTPSProxy = "http://" + hostport
			}
		}
	}
	var no []string
	for _, o := range strings.Split(override, ";") {
		switch o = strings.TrimSpace(o); {
		case o == "":
		case o == "<local>": // names without a dot: the nearest NO_PROXY can say is localhost
			no = append(no, "localhost")
		case strings.HasSuffix(o, ".*"): // 10.* → 10.0.0.0/8 and the like
			no = append(no, windowsWildcard(o))
		default:
			no = append(no, o)
		}
	}
	cfg.NoProxy = strings.Join(no, ",")
	if cfg.HTTPProxy == "" && cfg.HTTPSProxy == "" {
		return s
	}
	s.cfg = cfg
	return s
}

// windowsWildcard turns an address prefix with a trailing * (10.*,
// 192.168.*) into its CIDR; anything else passes as it is.
func windowsWildcard(o string) string {
	parts := strings.Split(strings.TrimSuffix(o, ".*"), ".")
	if len(parts) > 3 {
		return o
	}
	for _, p := range parts {
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 255 {
			return o
		}
	}
	bits := 8 * len(parts)
	for len(parts) < 4 {
		parts = append(parts, "0")
	}
	return strings.Join(parts, ".") + "/" + strconv.Itoa(bits)
}
