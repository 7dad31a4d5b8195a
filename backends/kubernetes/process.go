package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Top lists the container's processes with ps inside it (the image needs
// ps): psArgs as given (docker top's default -ef), else plain ps where the
// image's ps takes no such options (busybox).
func (b *Backend) Top(ctx context.Context, id, psArgs string) (backends.Processes, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return backends.Processes{}, err
	}
	args := strings.Fields(psArgs)
	if len(args) == 0 {
		args = []string{"-ef"}
	}
	var out, errb bytes.Buffer
	code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: append([]string{"ps"}, args...), Stdout: &out, Stderr: &errb})
	if err == nil && code != 0 && psArgs == "" {
		out.Reset()
		errb.Reset()
		code, err = b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"ps"}, Stdout: &out, Stderr: &errb})
	}
	if err != nil {
		return backends.Processes{}, fmt.Errorf("top %s: %w", c.rec.Name, err)
	}
	if code != 0 {
		return backends.Processes{}, fmt.Errorf("top %s: ps exited %d: %s: %w", c.rec.Name, code, strings.TrimSpace(errb.String()), errdefs.ErrUnknown)
	}
	return parsePS(out.String()), nil
}

// parsePS splits ps output into columns: the header's, the last one
// taking the rest of the line (the command).
func parsePS(text string) backends.Processes {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 {
		return backends.Processes{}
	}
	p := backends.Processes{Titles: strings.Fields(lines[0])}
	n := len(p.Titles)
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) == 0 || n == 0 {
			continue
		}
		if len(f) > n {
			f = append(f[:n-1], strings.Join(f[n-1:], " "))
		}
		p.Processes = append(p.Processes, f)
	}
	return p
}
