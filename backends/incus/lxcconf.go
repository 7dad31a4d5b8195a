package incus

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// LXC reads raw.lxc, and the configuration Incus writes for the keys it
// maps (linux.sysctl.*, environment.*, limits.kernel.*, disks), as a file
// of KEY = VALUE lines: a line break in a value starts a new setting, such
// as an lxc.hook.pre-start that runs as host root (a hostname did this, and
// so did a sysctl's value). lxcConfig is the one writer of raw.lxc;
// checkSpecText refuses such text in the spec before anything is made, and
// checkBodyText in the whole instance body before it is sent.

// lxcTextError is a value refused for holding a line break or NUL. It is
// an errdefs InvalidArgument error.
type lxcTextError struct {
	Field string // the spec field, or the Incus key
	Value string
}

func (e *lxcTextError) Error() string {
	return fmt.Sprintf("%s: %q holds a line break or NUL, which Incus's LXC configuration would read as a setting of its own", e.Field, e.Value)
}

func (e *lxcTextError) Unwrap() error { return errInvalid }

// oneLine reports text fit for one configuration line.
func oneLine(s string) bool { return !strings.ContainsAny(s, "\n\r\x00") }

// lxcConfig builds raw.lxc; the first refused value is its error.
type lxcConfig struct {
	lines []string
	err   error
}

// set adds "key = value" ("key =" for an empty value, which clears it).
func (c *lxcConfig) set(key, value string) {
	if c.err != nil {
		return
	}
	if !oneLine(key) || !oneLine(value) {
		c.err = &lxcTextError{Field: "raw.lxc " + key, Value: value}
		return
	}
	line := key + " ="
	if value != "" {
		line += " " + value
	}
	c.lines = append(c.lines, line)
}

// text is raw.lxc, or the refusal.
func (c *lxcConfig) text() (string, error) {
	if c.err != nil {
		return "", c.err
	}
	return strings.Join(c.lines, "\n") + "\n", nil
}

// checkSpecText refuses spec text Incus or LXC would split into lines,
// naming the field, before Create makes anything: what reaches raw.lxc
// (the hostname), Incus keys LXC re-reads (sysctls, environment, device
// and disk paths, a volume's mount options) and names in hosts files
// (the hostname, network aliases, extra hosts), where a space splits a
// name too.
func checkSpecText(cs backends.ContainerSpec) error {
	if !oneName(cs.Hostname) {
		return &lxcTextError{Field: "hostname", Value: cs.Hostname}
	}
	for _, k := range slices.Sorted(maps.Keys(cs.Sysctls)) {
		if !oneLine(k) || !oneLine(cs.Sysctls[k]) {
			return &lxcTextError{Field: "sysctls." + k, Value: cs.Sysctls[k]}
		}
	}
	for i, kv := range cs.Env {
		if !oneLine(kv) {
			return &lxcTextError{Field: fmt.Sprintf("env[%d]", i), Value: kv}
		}
	}
	for i, d := range cs.Devices {
		if !oneLine(d.Source) || !oneLine(d.Target) {
			return &lxcTextError{Field: fmt.Sprintf("devices[%d]", i), Value: d.Source + ":" + d.Target}
		}
	}
	for i, m := range cs.Binds {
		if !oneLine(m.Source) || !oneLine(m.Target) {
			return &lxcTextError{Field: fmt.Sprintf("mounts[%d]", i), Value: m.Source + ":" + m.Target}
		}
	}
	for i, v := range cs.Volumes {
		if !oneLine(v.Target) || !oneLine(v.Subpath) {
			return &lxcTextError{Field: fmt.Sprintf("volumes[%d].target", i), Value: v.Target + " " + v.Subpath}
		}
		for _, k := range slices.Sorted(maps.Keys(v.DriverOpts)) {
			if !oneLine(k) || !oneLine(v.DriverOpts[k]) {
				return &lxcTextError{Field: fmt.Sprintf("volumes[%d].driverOpts.%s", i, k), Value: v.DriverOpts[k]}
			}
		}
	}
	for i, n := range cs.Networks {
		for _, a := range n.Aliases {
			if !oneName(a) {
				return &lxcTextError{Field: fmt.Sprintf("networks[%d].aliases", i), Value: a}
			}
		}
	}
	for i, h := range cs.ExtraHosts {
		if !oneName(h.Host) {
			return &lxcTextError{Field: fmt.Sprintf("extraHosts[%d]", i), Value: h.Host}
		}
	}
	return nil
}

// oneName reports a name fit for a hosts file line: no space or control
// character.
func oneName(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// checkBodyText refuses an instance body with a key or value that would
// break a configuration line (raw.lxc has its own writer), whatever put it
// there.
func checkBodyText(body instancesPost) error {
	for _, k := range slices.Sorted(maps.Keys(body.Config)) {
		if k != "raw.lxc" && (!oneLine(k) || !oneLine(body.Config[k])) {
			return &lxcTextError{Field: "incus config " + k, Value: body.Config[k]}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(body.Devices)) {
		for k, v := range body.Devices[name] {
			if !oneLine(k) || !oneLine(v) {
				return &lxcTextError{Field: "incus device " + name + " " + k, Value: v}
			}
		}
	}
	return nil
}
