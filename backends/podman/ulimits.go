package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// defaultUlimits returns the ulimits the service gives a container that
// asks for none (containers.conf's default_ulimits, which the API does not
// report elsewhere): learned once, from a container created for the
// purpose with image and removed at once (never started).
func (b *Backend) defaultUlimits(ctx context.Context, image string) ([]backends.Ulimit, error) {
	b.ulimitsMu.Lock()
	defer b.ulimitsMu.Unlock()
	if b.ulimits != nil {
		return b.ulimits, nil
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	probe := specGenerator{
		Name: "cornus-ulimits-probe-" + hex.EncodeToString(suffix[:]), Image: image,
		Command: &[]string{"true"}, NetNS: &namespace{NSMode: "none"},
	}
	var res createResponse
	if _, err := b.cli.call(ctx, request{method: "POST", path: "/containers/create", body: probe}, &res); err != nil {
		return nil, fmt.Errorf("learn the service's default ulimits: %w", err)
	}
	d, err := b.inspect(ctx, res.ID)
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	rmErr := b.Remove(rmCtx, res.ID, backends.RemoveOptions{Force: true, Volumes: true})
	if err != nil {
		return nil, fmt.Errorf("learn the service's default ulimits: %w", err)
	}
	if rmErr != nil {
		return nil, fmt.Errorf("learn the service's default ulimits: %w", rmErr)
	}
	out := []backends.Ulimit{}
	for _, u := range d.HostConfig.Ulimits {
		name := strings.ToLower(strings.TrimPrefix(u.Name, "RLIMIT_"))
		out = append(out, backends.Ulimit{Name: name, Soft: int64(u.Soft), Hard: int64(u.Hard)})
	}
	b.ulimits = out
	return out, nil
}
