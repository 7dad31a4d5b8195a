package incus

import (
	"fmt"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
)

// capNumbers are Linux capability numbers by Docker's names (no CAP_).
var capNumbers = map[string]int{
	"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6,
	"SETUID": 7, "SETPCAP": 8, "LINUX_IMMUTABLE": 9, "NET_BIND_SERVICE": 10, "NET_BROADCAST": 11, "NET_ADMIN": 12,
	"NET_RAW": 13, "IPC_LOCK": 14, "IPC_OWNER": 15, "SYS_MODULE": 16, "SYS_RAWIO": 17, "SYS_CHROOT": 18,
	"SYS_PTRACE": 19, "SYS_PACCT": 20, "SYS_ADMIN": 21, "SYS_BOOT": 22, "SYS_NICE": 23, "SYS_RESOURCE": 24,
	"SYS_TIME": 25, "SYS_TTY_CONFIG": 26, "MKNOD": 27, "LEASE": 28, "AUDIT_WRITE": 29, "AUDIT_CONTROL": 30,
	"SETFCAP": 31, "MAC_OVERRIDE": 32, "MAC_ADMIN": 33, "SYSLOG": 34, "WAKE_ALARM": 35, "BLOCK_SUSPEND": 36,
	"AUDIT_READ": 37, "PERFMON": 38, "BPF": 39, "CHECKPOINT_RESTORE": 40,
}

// defaultCaps is Docker's default capability set, which cornus gives an
// Incus container's processes too (Incus itself would leave them every
// capability of the container's user namespace).
var defaultCaps = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
	"NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// capSet is Docker's rule: the default set, minus capDrop (ALL: all of
// it), plus capAdd (ALL: every capability). Names may carry CAP_ and any
// case.
func capSet(add, drop []string) ([]string, error) {
	norm := func(field string, list []string) ([]string, error) {
		var out []string
		for i, c := range list {
			c = strings.TrimPrefix(strings.ToUpper(c), "CAP_")
			if _, ok := capNumbers[c]; !ok && c != "ALL" {
				return nil, fmt.Errorf("%s[%d]: %q is not a Linux capability: %w", field, i, list[i], errdefs.ErrInvalidArgument)
			}
			out = append(out, c)
		}
		return out, nil
	}
	add, err := norm("capAdd", add)
	if err != nil {
		return nil, err
	}
	drop, err = norm("capDrop", drop)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	if !slices.Contains(drop, "ALL") {
		for _, c := range defaultCaps {
			set[c] = !slices.Contains(drop, c)
		}
	}
	for _, c := range add {
		if c == "ALL" {
			for name := range capNumbers {
				set[name] = true
			}
			continue
		}
		set[c] = true
	}
	out := []string{}
	for name, on := range set {
		if on {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}
