package builder

import (
	"context"
	"fmt"
	"slices"

	"github.com/moby/buildkit/session/sshforward"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/cornus-dev/cornus/spec"
)

// agents forwards a build's ssh entries (RUN --mount=type=ssh) to the
// client's agents through Files: this machine's sockets, or a client's
// over a server's session.
type agents struct {
	entries []spec.BuildSSH
	files   Files
}

func (a agents) Register(srv *grpc.Server) { sshforward.RegisterSSHServer(srv, a) }

func (a agents) entry(id string) (spec.BuildSSH, error) {
	if id == "" {
		id = sshforward.DefaultID
	}
	i := slices.IndexFunc(a.entries, func(e spec.BuildSSH) bool { return e.ID == id })
	if i < 0 {
		return spec.BuildSSH{}, fmt.Errorf("ssh %q: not one of the build's ssh entries", id)
	}
	return a.entries[i], nil
}

func (a agents) CheckAgent(_ context.Context, req *sshforward.CheckAgentRequest) (*sshforward.CheckAgentResponse, error) {
	if _, err := a.entry(req.ID); err != nil {
		return nil, err
	}
	return &sshforward.CheckAgentResponse{}, nil
}

func (a agents) ForwardAgent(stream sshforward.SSH_ForwardAgentServer) error {
	ctx := stream.Context()
	id := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(sshforward.KeySSHID); len(v) > 0 {
			id = v[0]
		}
	}
	e, err := a.entry(id)
	if err != nil {
		return err
	}
	conn, err := a.files.Agent(ctx, e)
	if err != nil {
		return err
	}
	defer conn.Close()
	return sshforward.Copy(ctx, conn, stream, nil)
}
