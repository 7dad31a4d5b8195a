package translate

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// mapped marks a Compose service attribute that translate carries into the
// spec (possibly warning about unsupported sub-fields itself).
const mapped = ""

// serviceFields classifies every attribute of compose-go's ServiceConfig:
// mapped, or the reason it is not honored. Any attribute set on a service
// and not mapped produces a warning with that reason. TestServiceFieldsComplete
// fails when compose-go grows an attribute missing from this table, so a new
// field cannot slip through silently.
var serviceFields = map[string]string{
	// identity, lifecycle, scale
	"image": mapped, "restart": mapped, "scale": mapped, "deploy": mapped, "container_name": mapped,
	"profiles":    mapped, // applied by the loader
	"extends":     mapped, // resolved by the loader
	"pull_policy": mapped, "platform": mapped,
	"depends_on": mapped, "healthcheck": mapped, "post_start": mapped, "pre_stop": mapped,
	"links": mapped, // service names resolve on project networks; aliases are warned about
	// process
	"command": mapped, "entrypoint": mapped, "working_dir": mapped, "user": mapped, "group_add": mapped,
	"environment": mapped, "env_file": mapped, "labels": mapped, "label_file": mapped,
	"hostname": mapped, "domainname": mapped, "init": mapped, "tty": mapped, "stdin_open": mapped,
	"stop_signal": mapped, "stop_grace_period": mapped,
	// security
	"privileged": mapped, "read_only": mapped, "cap_add": mapped, "cap_drop": mapped,
	"security_opt": mapped, "devices": mapped, "sysctls": mapped, "ulimits": mapped,
	"pid": mapped, "ipc": mapped, "uts": mapped, "userns_mode": mapped, "cgroup": mapped,
	"device_cgroup_rules": mapped,
	// resources
	"cpus": mapped, "mem_limit": mapped, "mem_reservation": mapped, "pids_limit": mapped, "shm_size": mapped,
	// network
	"ports": mapped, "expose": mapped, "networks": mapped, "network_mode": mapped,
	"dns": mapped, "dns_opt": mapped, "dns_search": mapped, "extra_hosts": mapped,
	// storage
	"volumes": mapped, "tmpfs": mapped, "secrets": mapped, "configs": mapped,
	"logging": mapped, "log_driver": mapped, "log_opt": mapped,
	"build":    mapped, // translate/build.go
	"develop":  mapped, // develop.watch: compose watch reads it on the client
	"provider": mapped, // warned about in translate: the service is skipped

	"dockerfile":         "the legacy dockerfile attribute is not supported; use build.dockerfile",
	"attach":             "every service's logs are shown",
	"external_links":     "links to containers outside the project are not supported; use an external network",
	"net":                "the legacy net attribute is not supported; use network_mode",
	"pre_start":          "pre_start init containers are not supported yet",
	"annotations":        "OCI annotations are not supported",
	"blkio_config":       "block IO weights and throttles are not supported",
	"cgroup_parent":      "a custom cgroup parent is not supported",
	"cpu_count":          "Windows CPU count is not supported; use cpus",
	"cpu_percent":        "Windows CPU percent is not supported; use cpus",
	"cpu_period":         "CFS period tuning is not supported; use cpus",
	"cpu_quota":          "CFS quota tuning is not supported; use cpus",
	"cpu_rt_period":      "realtime scheduling is not supported",
	"cpu_rt_runtime":     "realtime scheduling is not supported",
	"cpu_shares":         "relative CPU shares are not supported; use cpus",
	"cpuset":             "CPU pinning is not supported",
	"credential_spec":    "Windows credential specs are not supported",
	"gpus":               "GPU requests are not supported",
	"isolation":          "Windows isolation is not supported",
	"mac_address":        "fixed MAC addresses are not supported",
	"memswap_limit":      "swap limits are not supported",
	"mem_swappiness":     "swappiness is not supported",
	"models":             "AI models are not supported",
	"oom_kill_disable":   "disabling the OOM killer is not supported",
	"oom_score_adj":      "OOM score adjustment is not supported",
	"pull_refresh_after": "timed image refresh is not supported",
	"runtime":            "choosing an OCI runtime per service is not supported",
	"storage_opt":        "storage driver options are not supported",
	"umask":              "umask is not supported",
	"use_api_socket":     "mounting the engine API socket is not supported",
	"volume_driver":      "a per-service volume driver is not supported; set driver on the volume",
	"volumes_from":       "volumes_from is not supported; share a named volume",
}

// unmappedWarnings warns once for each attribute set on s that translate
// does not map.
func unmappedWarnings(s types.ServiceConfig) []spec.Warning {
	v := reflect.ValueOf(s)
	attrs := compose.ServiceAttributes()
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []spec.Warning
	for _, n := range names {
		reason, known := serviceFields[n]
		if known && reason == mapped {
			continue
		}
		if v.FieldByIndex(attrs[n]).IsZero() {
			continue
		}
		if !known {
			reason = "not supported by cornus"
		}
		out = append(out, spec.Warning{Service: s.Name, Field: n, Message: fmt.Sprintf("%s; ignored", reason)})
	}
	return out
}
