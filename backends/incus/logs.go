package incus

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Logs copies the container's output from the log its init writes into
// the record directory (stdout and stderr apart, with timestamps), so
// since, until, tail, timestamps and follow all hold.
func (b *Backend) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	in, err := b.find(ctx, id)
	if err != nil {
		return fmt.Errorf("logs of container %s: %w", id, err)
	}
	dir := in.Config[keyDir]
	if dir == "" {
		return b.logsOCI(ctx, in, o)
	}
	return monitor.Logs(ctx, dir, monitor.LogOptions{Follow: o.Follow, Tail: o.Tail, Since: o.Since, Until: o.Until,
		Timestamps: o.Timestamps, Stdout: o.Stdout, Stderr: o.Stderr})
}

// maxConsoleLog bounds one read of an instance's console log.
const maxConsoleLog = 16 << 20

// consoleLog returns everything an OCI container wrote to its console so
// far. Incus's console log drains on each read while the instance runs,
// so every read is appended to cornus's own copy
// (<data dir>/console/<instance>.log), which is what is returned.
func (b *Backend) consoleLog(ctx context.Context, name string) ([]byte, error) {
	resp, err := b.cli.raw(ctx, request{method: "GET", path: instancePath(name) + "/console"})
	if err != nil {
		return nil, fmt.Errorf("console log: %w", err)
	}
	fresh, err := io.ReadAll(io.LimitReader(resp.Body, maxConsoleLog))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("console log: %w", err)
	}
	dir := filepath.Join(b.cfg.dataDir, "console")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("console log: %w", err)
	}
	path := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("console log: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(fresh); err != nil {
		return nil, fmt.Errorf("console log: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, maxConsoleLog))
}
