package podman

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// statHeader carries a path's stat on archive answers (base64 JSON).
const statHeader = "X-Docker-Container-Path-Stat"

// maxStatHeader bounds the stat header decoded.
const maxStatHeader = 16 << 10

// pathStatWire is the stat header's JSON.
type pathStatWire struct {
	Name       string    `json:"name"`
	Size       int64     `json:"size"`
	Mode       uint32    `json:"mode"`
	Mtime      time.Time `json:"mtime"`
	LinkTarget string    `json:"linkTarget"`
}

// CopyFrom returns a tar of path (docker cp semantics: a directory's tar
// holds the directory itself) and the stat of path. The caller closes the
// stream.
func (b *Backend) CopyFrom(ctx context.Context, id, p string) (io.ReadCloser, backends.PathStat, error) {
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return nil, backends.PathStat{}, fmt.Errorf("copy %s from container %s: %w", p, id, err)
	}
	resp, err := b.cli.do(ctx, request{method: "GET", path: "/containers/" + url.PathEscape(id) + "/archive", query: url.Values{"path": {p}}})
	if err != nil {
		release()
		return nil, backends.PathStat{}, fmt.Errorf("copy %s from container %s: %w", p, id, err)
	}
	body := guardedBody{resp.Body, release}
	st, err := pathStatOf(resp.Header)
	if err != nil {
		body.Close()
		return nil, backends.PathStat{}, fmt.Errorf("copy %s from container %s: %w", p, id, err)
	}
	return body, st, nil
}

// CopyTo extracts a tar into the directory dir, keeping the owners the
// tar names (as Docker's API does by default; podman's default gives
// everything to the container's user).
func (b *Backend) CopyTo(ctx context.Context, id, dir string, tar io.Reader) error {
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return fmt.Errorf("copy to %s in container %s: %w", dir, id, err)
	}
	defer release()
	err = b.cli.call(ctx, request{
		method: "PUT", path: "/containers/" + url.PathEscape(id) + "/archive", query: url.Values{"path": {dir}, "copyUIDGID": {"false"}},
		body: tar, header: http.Header{"Content-Type": {"application/x-tar"}},
	}, nil)
	if err != nil {
		return fmt.Errorf("copy to %s in container %s: %w", dir, id, err)
	}
	return nil
}

// StatPath describes a path in the container.
func (b *Backend) StatPath(ctx context.Context, id, p string) (backends.PathStat, error) {
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s in container %s: %w", p, id, err)
	}
	defer release()
	resp, err := b.cli.do(ctx, request{method: "HEAD", path: "/containers/" + url.PathEscape(id) + "/archive", query: url.Values{"path": {p}}})
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s in container %s: %w", p, id, err)
	}
	resp.Body.Close()
	st, err := pathStatOf(resp.Header)
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat %s in container %s: %w", p, id, err)
	}
	return st, nil
}

func pathStatOf(h http.Header) (backends.PathStat, error) {
	v := h.Get(statHeader)
	if v == "" {
		return backends.PathStat{}, nil
	}
	if len(v) > maxStatHeader {
		return backends.PathStat{}, fmt.Errorf("stat header larger than %d bytes", maxStatHeader)
	}
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return backends.PathStat{}, fmt.Errorf("stat header: %w", err)
	}
	var s pathStatWire
	if err := json.Unmarshal(data, &s); err != nil {
		return backends.PathStat{}, fmt.Errorf("stat header: %w", err)
	}
	return backends.PathStat{Name: s.Name, Size: s.Size, Mode: s.Mode, Mtime: s.Mtime, LinkTarget: s.LinkTarget}, nil
}
