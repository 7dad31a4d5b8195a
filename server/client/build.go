package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/containerd/errdefs"
	"github.com/tonistiigi/fsutil"
	"github.com/tonistiigi/fsutil/types"

	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// Build builds images on the server (POST /v1/projects/{project}/build)
// from this client's files, which session serves meanwhile (ServeBuild
// with req.BuildID); progress lines go to c.BuildLine.
func (c *Client) Build(ctx context.Context, session string, req api.BuildRequest) (api.BuildResult, error) {
	hdr := map[string][]string{api.HeaderSession: {session}}
	var res api.BuildResult
	_, err := c.stream(ctx, projectPath(req.Spec.Name, "build"), hdr, req, &res)
	return res, err
}

// ServeBuild serves the server's reads for build id (OpBuild streams):
// the directories, secrets and ssh entries of builds, and nothing else,
// read with files. The returned count grows with what is sent.
func (s *Session) ServeBuild(id string, builds []spec.Build, files builder.Files) *Sent {
	bf := buildFiles{id: id, builds: builds, dirs: buildDirs(builds), files: files, sent: &Sent{}}
	s.Handle(api.OpBuild, bf.serve)
	return bf.sent
}

// Sent counts what a client sent a build: file contents (and secrets)
// and the stats of its walks.
type Sent struct {
	Bytes, Files atomic.Int64
}

type buildFiles struct {
	id     string
	builds []spec.Build
	dirs   []string
	files  builder.Files
	sent   *Sent
}

func (bf buildFiles) serve(h api.StreamHeader, st net.Conn) {
	defer st.Close()
	b := h.Build
	if b == nil || b.Build != bf.id {
		Reply(st, fmt.Errorf("%w: not this client's build", errdefs.ErrPermissionDenied))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	switch b.Kind {
	case api.BuildWalk:
		err = bf.walk(ctx, *b, st)
	case api.BuildOpenFile:
		err = bf.open(ctx, *b, st)
	case api.BuildSecret:
		err = bf.secret(ctx, *b, st)
	case api.BuildAgent:
		err = bf.agent(ctx, *b, st)
	default:
		err = fmt.Errorf("%w: build read %q", errdefs.ErrInvalidArgument, b.Kind)
	}
	if err != nil {
		Reply(st, err) // the stream's answer: nothing was sent yet
	}
}

// dir opens a directory the builds name, and no other.
func (bf buildFiles) dir(ctx context.Context, b api.BuildOpen) (fsutil.FS, func(), error) {
	d := filepath.Clean(b.Dir)
	if !filepath.IsAbs(d) || !slices.Contains(bf.dirs, d) {
		return nil, nil, fmt.Errorf("%w: %s is not a directory of the build's", errdefs.ErrPermissionDenied, b.Dir)
	}
	return bf.files.Dir(ctx, d, b.Excludes)
}

// walk sends the stats of the directory's walk, a line each, then the end.
func (bf buildFiles) walk(ctx context.Context, b api.BuildOpen, st net.Conn) error {
	dir, done, err := bf.dir(ctx, b)
	if err != nil {
		return err
	}
	defer done()
	Reply(st, nil)
	enc := json.NewEncoder(st)
	werr := dir.Walk(ctx, b.Target, func(_ string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := entry.Info()
		if err != nil {
			return err
		}
		stat, ok := fi.Sys().(*types.Stat)
		if !ok {
			return fmt.Errorf("%s: no file stat", fi.Name())
		}
		raw, err := json.Marshal(stat)
		if err != nil {
			return err
		}
		bf.sent.Bytes.Add(int64(len(raw)))
		return enc.Encode(api.BuildEntry{Stat: raw})
	})
	end := api.BuildEntry{End: true}
	if werr != nil && !errors.Is(werr, fs.ErrNotExist) {
		end.Error = werr.Error()
	}
	_ = enc.Encode(end)
	return nil
}

func (bf buildFiles) open(ctx context.Context, b api.BuildOpen, st net.Conn) error {
	dir, done, err := bf.dir(ctx, b)
	if err != nil {
		return err
	}
	defer done()
	rc, err := dir.Open(b.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", errdefs.ErrNotFound, b.Path)
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	Reply(st, nil)
	// Chunked with an end: a read that fails half-way leaves the server
	// a payload it knows is broken off, never a shorter file.
	cw := api.ChunkWriter{W: st}
	n, err := io.Copy(cw, rc)
	bf.sent.Bytes.Add(n)
	bf.sent.Files.Add(1)
	if err == nil {
		_ = cw.End()
	}
	return nil // answered: an error now cannot be the stream's answer
}

// secret sends a secret a build declares, read here (its file or this
// client's environment): the server holds it only while the step runs.
func (bf buildFiles) secret(ctx context.Context, b api.BuildOpen, st net.Conn) error {
	for _, build := range bf.builds {
		for _, s := range build.Secrets {
			if b.Secret == nil || s.ID != b.Secret.ID || s.File != b.Secret.File || s.Environment != b.Secret.Environment {
				continue
			}
			data, err := bf.files.Secret(ctx, s)
			if err != nil {
				return err
			}
			Reply(st, nil)
			cw := api.ChunkWriter{W: st}
			n, err := cw.Write(data)
			bf.sent.Bytes.Add(int64(n))
			if err == nil {
				_ = cw.End()
			}
			return nil
		}
	}
	return fmt.Errorf("%w: not a secret of the build's", errdefs.ErrPermissionDenied)
}

// agent connects the stream to the ssh agent a build's entry names.
func (bf buildFiles) agent(ctx context.Context, b api.BuildOpen, st net.Conn) error {
	e, ok := bf.sshEntry(b.SSH)
	if !ok {
		return fmt.Errorf("%w: not an ssh entry of the build's", errdefs.ErrPermissionDenied)
	}
	conn, err := bf.files.Agent(ctx, e)
	if err != nil {
		return err
	}
	defer conn.Close()
	Reply(st, nil)
	go func() { _, _ = io.Copy(conn, st) }()
	_, _ = io.Copy(st, conn)
	return nil
}

// sshEntry finds want among the builds' ssh entries.
func (bf buildFiles) sshEntry(want *spec.BuildSSH) (spec.BuildSSH, bool) {
	for _, build := range bf.builds {
		for _, e := range build.SSH {
			if want != nil && e.ID == want.ID && slices.Equal(e.Paths, want.Paths) {
				return e, true
			}
		}
	}
	return spec.BuildSSH{}, false
}

// buildDirs are the directories builds read: their contexts, their
// Dockerfiles', their additional contexts and stages that are directories.
func buildDirs(builds []spec.Build) []string {
	var out []string
	for _, b := range builds {
		out = append(out, filepath.Clean(b.Context))
		if b.DockerfileInline == "" {
			out = append(out, filepath.Dir(b.DockerfilePath()))
		}
		for _, v := range b.AdditionalContexts {
			if filepath.IsAbs(v) {
				out = append(out, filepath.Clean(v))
			}
		}
		for _, s := range b.Extend {
			if s.Dir != "" {
				out = append(out, filepath.Clean(s.Dir))
			}
		}
	}
	return out
}
