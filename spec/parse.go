package spec

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Restart policy names.
const (
	RestartNo            = "no"
	RestartAlways        = "always"
	RestartOnFailure     = "on-failure"
	RestartUnlessStopped = "unless-stopped"
)

// RestartPolicy is a parsed restart string.
type RestartPolicy struct {
	Name       string `json:"name,omitempty"` // "" is "no"
	MaxRetries int    `json:"maxRetries,omitempty"`
}

// ParseRestart parses "no", "always", "on-failure[:N]" or "unless-stopped".
func ParseRestart(s string) (RestartPolicy, error) {
	name, count, hasCount := strings.Cut(s, ":")
	switch name {
	case RestartNo, RestartAlways, RestartUnlessStopped:
		if hasCount {
			return RestartPolicy{}, fmt.Errorf("%q: only on-failure takes a retry count", s)
		}
		return RestartPolicy{Name: name}, nil
	case RestartOnFailure:
		p := RestartPolicy{Name: name}
		if hasCount {
			n, err := strconv.Atoi(count)
			if err != nil || n < 0 {
				return RestartPolicy{}, fmt.Errorf("%q: the retry count must be a non-negative integer", s)
			}
			p.MaxRetries = n
		}
		return p, nil
	}
	return RestartPolicy{}, fmt.Errorf("%q is not one of no, always, on-failure[:N], unless-stopped", s)
}

var signals = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "BUS": 7, "FPE": 8,
	"KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15,
	"STKFLT": 16, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21, "TTOU": 22,
	"URG": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27, "WINCH": 28, "IO": 29,
	"PWR": 30, "SYS": 31,
}

// ParseSignal accepts SIGTERM, TERM or 15 (and SIGRTMIN+N) and returns the
// Linux signal number.
func ParseSignal(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n > 0 && n <= 64
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if n, ok := signals[name]; ok {
		return n, true
	}
	if rest, ok := strings.CutPrefix(name, "RTMIN+"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 && 34+n <= 64 {
			return 34 + n, true
		}
	}
	return 0, false
}

// ParsePortRange parses "80", "80/udp" or "8000-8010/tcp".
func ParsePortRange(s string) (start, end int, proto string, err error) {
	rng, proto, hasProto := strings.Cut(s, "/")
	if !hasProto {
		proto = "tcp"
	}
	switch proto {
	case "tcp", "udp", "sctp":
	default:
		return 0, 0, "", fmt.Errorf("%q: protocol must be tcp, udp or sctp", s)
	}
	lo, hi, isRange := strings.Cut(rng, "-")
	start, err1 := strconv.Atoi(lo)
	end = start
	var err2 error
	if isRange {
		end, err2 = strconv.Atoi(hi)
	}
	if err1 != nil || err2 != nil || start < 1 || end > 65535 || end < start {
		return 0, 0, "", fmt.Errorf("%q is not a port or port range within 1-65535", s)
	}
	return start, end, proto, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// SignalName is a signal's canonical name: SIGTERM, SIGRTMIN+3, or the
// number for signals without one.
func SignalName(n int) string {
	for name, v := range signals {
		if v == n {
			return "SIG" + name
		}
	}
	if n >= 34 && n <= 64 {
		return "SIGRTMIN+" + strconv.Itoa(n-34)
	}
	return strconv.Itoa(n)
}
