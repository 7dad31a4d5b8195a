package monitor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// processStart reads a process's start time (field 22 of /proc/<pid>/stat,
// in clock ticks after boot) and whether it still runs (not a zombie).
func processStart(pid int) (ticks uint64, running bool, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, err
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields we want follow the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, false, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return 0, false, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ticks, err = strconv.ParseUint(f[19], 10, 64) // f[0] is field 3
	if err != nil {
		return 0, false, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	return ticks, f[0] != "Z" && f[0] != "X", nil
}
