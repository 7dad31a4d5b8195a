package hostpolicy

import (
	"slices"

	"github.com/cornus-dev/cornus/spec"
)

// localLogDrivers keep a container's output on the host, where the
// runtime's own tools read it. journald is one: it writes to the host's
// journal, which records trusted fields (_SYSTEMD_UNIT, _PID, _COMM) naming
// the runtime daemon, never the container, so its lines cannot pass for a
// host service's; it dials nothing and reads no credentials, and it is
// podman's default anyway. k8s-file and passthrough are podman's file and
// pass-through drivers.
var localLogDrivers = []string{"", "json-file", "local", "none", "journald", "k8s-file", "passthrough"}

// logPower names the logging field that is host power (driver or
// options.path) and why, or returns "", "". Every other
// driver (syslog, gelf, fluentd, splunk, awslogs, gcplogs, logentries,
// etwlogs, plugins) makes the runtime daemon, on the host, dial the address
// the options name or sign in with the host's cloud credentials.
func logPower(l spec.Logging) (field, why string) {
	if slices.Contains(localLogDrivers, l.Driver) {
		if _, ok := l.Options["path"]; ok {
			return "options.path", "writes the container's log to a host path"
		}
		return "", ""
	}
	return "driver", "log driver " + l.Driver + " makes the runtime daemon send the container's output from the host: it dials the address its options name or uses the host's cloud credentials"
}
