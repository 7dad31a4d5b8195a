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
	"path/filepath"
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
	// sent bounds all a build's files and walks (as a tar context is
	// bounded): a client cannot fill the server's memory or disk.
	sent *api.Budget
}

// Bounds of what a client sends a build.
const (
	maxBuildBytes  = 8 << 30 // files and walks
	maxSecretBytes = 8 << 20 // one secret (as secret files are bounded)
	maxWalkLine    = 1 << 20 // one entry of a walk
	maxWalkEntries = 1 << 20 // one walk
)

func newRemoteFiles(sess *session, build string) remoteFiles {
	return remoteFiles{sess: sess, build: build, sent: api.NewBudget("the build's files", maxBuildBytes)}
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

func (f remoteFiles) Dir(ctx context.Context, dir string, excludes []string) (fsutil.FS, func(), error) {
	return remoteFS{ctx: ctx, f: f, dir: dir, excludes: excludes}, func() {}, nil
}

func (f remoteFiles) Secret(ctx context.Context, s spec.BuildSecret) ([]byte, error) {
	c, err := f.open(ctx, api.BuildOpen{Kind: api.BuildSecret, Secret: &s})
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", s.ID, err)
	}
	defer c.Close()
	data, err := io.ReadAll(&api.ChunkReader{R: c, Limit: api.NewBudget("secret "+s.ID, maxSecretBytes)})
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", s.ID, err)
	}
	return data, nil
}

func (f remoteFiles) Agent(ctx context.Context, e spec.BuildSSH) (net.Conn, error) {
	c, err := f.open(ctx, api.BuildOpen{Kind: api.BuildAgent, SSH: &e})
	if err != nil {
		return nil, fmt.Errorf("build ssh %q: %w", e.ID, err)
	}
	return c, nil
}

// remoteFS is a directory of the client's, walked and read over the
// session; the client applies excludes.
type remoteFS struct {
	ctx      context.Context // the build's: a client that stalls ends with it
	f        remoteFiles
	dir      string
	excludes []string
}

func (r remoteFS) Open(p string) (io.ReadCloser, error) {
	c, err := r.f.open(r.ctx, api.BuildOpen{Kind: api.BuildOpenFile, Dir: r.dir, Excludes: r.excludes, Path: p})
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("open %s: %w", p, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return chunked{ChunkReader: &api.ChunkReader{R: c, Limit: r.f.sent}, c: c}, nil
}

// chunked is a file's content as its client sends it.
type chunked struct {
	*api.ChunkReader
	c net.Conn
}

func (c chunked) Close() error { return c.c.Close() }

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
	br := bufio.NewReaderSize(c, 64<<10)
	var skip []string
	for n := 0; ; n++ {
		e, err := r.entry(br, n)
		if err != nil {
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
		if err := walkable(&st); err != nil {
			return fmt.Errorf("walk %s: %w", r.dir, err)
		}
		if skipped(skip, st.Path) {
			continue
		}
		err = fn(st.Path, &fsutil.DirEntryInfo{Stat: &st}, nil)
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

// entry reads the nth entry of a walk, bounded in size and number.
func (r remoteFS) entry(br *bufio.Reader, n int) (api.BuildEntry, error) {
	var e api.BuildEntry
	if n > maxWalkEntries {
		return e, fmt.Errorf("more than %d entries: %w", maxWalkEntries, errdefs.ErrResourceExhausted)
	}
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxWalkLine {
			return e, fmt.Errorf("an entry longer than %d bytes: %w", maxWalkLine, errdefs.ErrResourceExhausted)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return e, err
		}
		break
	}
	if err := r.f.sent.Take(int64(len(line))); err != nil {
		return e, err
	}
	err := json.Unmarshal(line, &e)
	return e, err
}

// walkable refuses an entry a build's files cannot hold: a path that is
// not clean and relative (a receiver would write it elsewhere), or a
// file that is not a directory, a regular file or a symlink (a device
// node made on the server's disk).
func walkable(st *types.Stat) error {
	if !filepath.IsLocal(st.Path) || path.Clean(st.Path) != st.Path {
		return fmt.Errorf("entry %q: not a clean relative path: %w", st.Path, errdefs.ErrInvalidArgument)
	}
	switch fs.FileMode(st.Mode).Type() {
	case 0, fs.ModeDir, fs.ModeSymlink:
		return nil
	}
	return fmt.Errorf("entry %s: mode %v: only directories, regular files and symlinks are sent: %w", st.Path, fs.FileMode(st.Mode), errdefs.ErrInvalidArgument)
}

func skipped(prefixes []string, p string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(p, pre) || pre == "./" {
			return true
		}
	}
	return false
}
