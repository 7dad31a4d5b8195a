//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// limitMemory caps the address space at what the process maps now plus
// headroom: past it an allocation fails, which the Go runtime makes a
// fatal error, ending this process and nothing else.
func limitMemory(headroom uint64) error {
	now, err := mappedBytes()
	if err != nil {
		return err
	}
	lim := now + headroom
	return unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: lim, Max: lim})
}

// mappedBytes is VmSize from /proc/self/status.
func mappedBytes() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/status VmSize %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/self/status: no VmSize")
}
