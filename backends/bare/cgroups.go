package bare

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// A container's cgroups are /<cgroupParent>/<id> in every hierarchy (the
// spec's cgroupsPath). Stats and the OOM flag are read straight from the
// cgroup files, v1 (a controller per hierarchy) or v2 (unified).

const cgroupRoot = "/sys/fs/cgroup"

func cgroupV2() bool {
	_, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	return err == nil
}

// cgroupFile is a container's file in a v1 controller's hierarchy, or in
// the unified one (controller "").
func cgroupFile(id, controller, name string) string {
	return filepath.Join(cgroupRoot, controller, cgroupParent, id, name)
}

func readUint(path string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// keyed reads "key value" lines (memory.stat, cpu.stat, oom_control).
func keyed(path string) map[string]uint64 {
	out := map[string]uint64{}
	data, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			out[f[0]] = n
		}
	}
	return out
}

// cgroupStats samples a running container's usage.
func cgroupStats(id string) backends.Stats {
	s := backends.Stats{Time: time.Now()}
	if cgroupV2() {
		s.CPUTotal = time.Duration(keyed(cgroupFile(id, "", "cpu.stat"))["usage_usec"]) * time.Microsecond
		s.MemoryUsage, s.MemoryLimit = readUint(cgroupFile(id, "", "memory.current")), readUint(cgroupFile(id, "", "memory.max"))
		s.Pids = readUint(cgroupFile(id, "", "pids.current"))
		data, _ := os.ReadFile(cgroupFile(id, "", "io.stat"))
		for _, f := range strings.Fields(string(data)) {
			if v, ok := strings.CutPrefix(f, "rbytes="); ok {
				n, _ := strconv.ParseUint(v, 10, 64)
				s.BlockRead += n
			} else if v, ok := strings.CutPrefix(f, "wbytes="); ok {
				n, _ := strconv.ParseUint(v, 10, 64)
				s.BlockWrite += n
			}
		}
		return s
	}
	s.CPUTotal = time.Duration(readUint(cgroupFile(id, "cpuacct", "cpuacct.usage")))
	s.MemoryUsage, s.MemoryLimit = readUint(cgroupFile(id, "memory", "memory.usage_in_bytes")), readUint(cgroupFile(id, "memory", "memory.limit_in_bytes"))
	s.Pids = readUint(cgroupFile(id, "pids", "pids.current"))
	data, _ := os.ReadFile(cgroupFile(id, "blkio", "blkio.throttle.io_service_bytes_recursive"))
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		n, _ := strconv.ParseUint(f[2], 10, 64)
		switch f[1] {
		case "Read":
			s.BlockRead += n
		case "Write":
			s.BlockWrite += n
		}
	}
	return s
}

// oomKilled reports whether the kernel's OOM killer killed a process of
// the container (read before the runtime removes its cgroups).
func oomKilled(id string) bool {
	if cgroupV2() {
		return keyed(cgroupFile(id, "", "memory.events"))["oom_kill"] > 0
	}
	return keyed(cgroupFile(id, "memory", "memory.oom_control"))["oom_kill"] > 0
}
