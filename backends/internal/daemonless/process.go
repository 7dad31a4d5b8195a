package daemonless

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes from /proc.
func (c *Core) Top(ctx context.Context, id, psArgs string) (backends.Processes, error) {
	st, _, err := c.Running(ctx, id)
	if err != nil {
		return backends.Processes{}, err
	}
	pids, err := c.rt.Pids(ctx, st.ID)
	if err != nil {
		return backends.Processes{}, err
	}
	out := backends.Processes{Titles: []string{"UID", "PID", "PPID", "CMD"}}
	for _, p := range pids {
		pid := strconv.Itoa(p)
		cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		status, _ := os.ReadFile("/proc/" + pid + "/status")
		uid, ppid := procField(status, "Uid:"), procField(status, "PPid:")
		out.Processes = append(out.Processes, []string{uid, pid, ppid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	return out, nil
}

func procField(status []byte, key string) string {
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}
