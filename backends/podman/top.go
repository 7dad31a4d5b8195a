package podman

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes. Podman takes ps descriptors
// ("pid,user,args") and answers a table; ps options it does not know
// ("-ef", "aux") make it run ps in the container and answer its lines
// whole, which are split into columns here.
func (b *Backend) Top(ctx context.Context, id string, psArgs string) (backends.Processes, error) {
	q := url.Values{}
	if psArgs != "" {
		q.Set("ps_args", psArgs)
	}
	var p backends.Processes
	if _, err := b.cli.call(ctx, request{method: "GET", path: containerPath(id, "top"), query: q}, &p); err != nil {
		return backends.Processes{}, fmt.Errorf("top of container %s: %w", id, err)
	}
	return splitColumns(p), nil
}

// splitColumns splits a one-column table of whole ps lines into columns,
// the last column keeping the rest of the line (the command).
func splitColumns(p backends.Processes) backends.Processes {
	if len(p.Titles) != 1 || !strings.Contains(strings.TrimSpace(p.Titles[0]), " ") {
		return p
	}
	titles := strings.Fields(p.Titles[0])
	out := backends.Processes{Titles: titles}
	for _, row := range p.Processes {
		line := strings.Join(row, " ")
		fields := strings.Fields(line)
		if len(fields) > len(titles) {
			// Rejoin the tail: the command may hold spaces.
			rest := line
			for range len(titles) - 1 {
				rest = strings.TrimLeft(rest, " \t")
				i := strings.IndexAny(rest, " \t")
				rest = rest[i:]
			}
			fields = append(fields[:len(titles)-1], strings.TrimSpace(rest))
		}
		out.Processes = append(out.Processes, fields)
	}
	return out
}
