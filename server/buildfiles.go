package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/tonistiigi/fsutil"
	"github.com/tonistiigi/fsutil/types"

	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// remoteFiles is what a build reads from its client (builder.Files), over
// the client's session (OpBuild streams): the context stays on the
// client, and only what the build asks for crosses. Nothing of the
// server's disk is read on a tenant's behalf.
type remoteFiles struct {
	sess  *session
	build string
}

var _ builder.Files = remoteFiles{}

func (f remoteFiles) open(ctx context.Context, b api.BuildOpen) (net.Conn, error) {
	b.Build = f.build
	c, err := openStream(f.sess.mux, api.StreamHeader{Op: api.OpBuild, Build: &b})
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = c.Close() })
	return c, nil
}

func (f remoteFiles) Dir(_ context.Context, dir string, excludes []string) (fsutil.FS, func(), error) {
	return remoteFS{f: f, dir: dir, excludes: excludes}, func() {}, nil
}

func (f remoteFiles) Secret(ctx context.Context, s spec.BuildSecret) ([]byte, error) {
	c, err := f.open(ctx, api.BuildOpen{Kind: api.BuildSecret, Secret: &s})
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", s.ID, err)
	}
	defer c.Close()
	return io.ReadAll(io.LimitReader(c, maxSecretBytes))
}

func (f remoteFiles) Agent(ctx context.Context, e spec.BuildSSH) (net.Conn, error) {
	c, err := f.open(ctx, api.BuildOpen{Kind: api.BuildAgent, SSH: &e})
	if err != nil {
		return nil, fmt.Errorf("build ssh %q: %w", e.ID, err)
	}
	return c, nil
}

// maxSecretBytes bounds a build secret (as secret files are bounded).
const maxSecretBytes = 8 << 20

// remoteFS is a directory of the client's, walked and read over the
// session; the client applies excludes.
type remoteFS struct {
	f        remoteFiles
	dir      string
	excludes []string
}

func (r remoteFS) Open(p string) (io.ReadCloser, error) {
	c, err := r.f.open(context.Background(), api.BuildOpen{Kind: api.BuildOpenFile, Dir: r.dir, Excludes: r.excludes, Path: p})
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("open %s: %w", p, fs.ErrNotExist)
	}
	return c, err
}

// Walk reads the client's walk of target: a stat a line. A SkipDir from
// fn passes over what the client sends below that directory.
func (r remoteFS) Walk(ctx context.Context, target string, fn fs.WalkDirFunc) error {
	c, err := r.f.open(ctx, api.BuildOpen{Kind: api.BuildWalk, Dir: r.dir, Excludes: r.excludes, Target: target})
	if errdefs.IsNotFound(err) {
		return nil // nothing there: an empty walk, as of a missing target
	}
	if err != nil {
		return err
	}
	defer c.Close()
	dec := json.NewDecoder(bufio.NewReader(c))
	var skip []string
	for {
		var e api.BuildEntry
		if err := dec.Decode(&e); err != nil {
			return fmt.Errorf("walk %s: %w", r.dir, err)
		}
		if e.End {
			if e.Error != "" {
				return fmt.Errorf("walk %s: %s", r.dir, e.Error)
			}
			return nil
		}
		var st types.Stat
		if err := json.Unmarshal(e.Stat, &st); err != nil {
			return fmt.Errorf("walk %s: %w", r.dir, err)
		}
		if skipped(skip, st.Path) {
			continue
		}
		err := fn(st.Path, &fsutil.DirEntryInfo{Stat: &st}, nil)
		switch {
		case errors.Is(err, fs.SkipAll):
			return nil
		case errors.Is(err, fs.SkipDir) && st.IsDir():
			skip = append(skip, st.Path+"/")
		case errors.Is(err, fs.SkipDir):
			skip = append(skip, path.Dir(st.Path)+"/") // the rest of its directory
		case err != nil:
			return err
		}
	}
}

func skipped(prefixes []string, p string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(p, pre) || pre == "./" {
			return true
		}
	}
	return false
}
