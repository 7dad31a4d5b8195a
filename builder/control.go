package builder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/containerd/errdefs"
	controlapi "github.com/moby/buildkit/api/services/control"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// The BuildKit API a docker buildx client speaks to a Docker Engine (its
// docker driver): /grpc carries BuildKit's control service, /session a
// build session. The Docker API proxy hands both here: every call goes
// to the backend's BuildKit as it is, but a solve, whose entitlements
// must meet the host policy and whose exporters must land in the
// backend's store (sessionSite.solveRequest).

// sessionSite is a site a BuildKit client may reach directly.
type sessionSite interface {
	kitSite
	// grpcConn opens a connection to the site's control API.
	grpcConn(ctx context.Context) (net.Conn, error)
	// sessionConn opens a build session (/session's upgrade).
	sessionConn(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error)
	// solveRequest makes a client's solve land in the backend's store.
	solveRequest(req *controlapi.SolveRequest)
}

// ServeBuildKit serves BuildKit's control API on conn (an upgraded /grpc
// request) until the client leaves, for the backend's builder.
func (x *Builder) ServeBuildKit(ctx context.Context, conn net.Conn, policy hostpolicy.Policy) error {
	s, err := x.sessionSite(ctx)
	if err != nil {
		_ = conn.Close()
		return err
	}
	up, err := grpc.NewClient("passthrough:///buildkit", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return s.grpcConn(ctx) }))
	if err != nil {
		_ = conn.Close()
		return err
	}
	defer up.Close()
	p := &controlProxy{up: up, site: s, policy: policy}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(p.forward), grpc.ForceServerCodec(rawCodec{}))
	l := &oneConn{conn: conn, done: make(chan struct{})}
	go func() {
		<-ctx.Done()
		srv.Stop()
	}()
	err = srv.Serve(l)
	if errors.Is(err, errServed) {
		return nil
	}
	return err
}

// DialSession opens a build session at the backend's builder, for an
// upgraded /session request carrying meta (its X-Docker-Expose-Session-*
// headers).
func (x *Builder) DialSession(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error) {
	s, err := x.sessionSite(ctx)
	if err != nil {
		return nil, err
	}
	return s.sessionConn(ctx, proto, meta)
}

func (x *Builder) sessionSite(ctx context.Context) (sessionSite, error) {
	if err := x.ServesBuildKit(ctx); err != nil {
		return nil, err
	}
	s, err := x.openSite(ctx)
	if err != nil {
		return nil, err
	}
	ss, ok := s.(sessionSite)
	if !ok {
		return nil, x.noBuildKit()
	}
	return ss, nil
}

// ServesBuildKit says, without starting anything, why the backend's
// builder cannot take BuildKit's API; nil when it can: dockerd's own
// BuildKit, or a buildkitd containerd worker on the backend's containerd.
// (buildkitd's OCI worker stores results where a client's exporter
// cannot reach the backend, and podman's builder is not a BuildKit.)
func (x *Builder) ServesBuildKit(ctx context.Context) error {
	bb, ok := x.backend.(backends.Builder)
	if !ok || !x.backend.Capabilities().Has(backends.FeatureBuild) {
		return x.noBuildKit()
	}
	bs, err := bb.BuildSite(ctx)
	if err != nil {
		return err
	}
	if bs.Dial != nil || (bs.Containerd != nil && envlist.Get(x.environ, EnvBuildWorker) != "oci") {
		return nil
	}
	return x.noBuildKit()
}

func (x *Builder) noBuildKit() error {
	return fmt.Errorf("BuildKit's API (docker buildx) is not served for the %s backend: build without buildx (DOCKER_BUILDKIT=0, the classic builder; docker compose and the devcontainer CLI use it when buildx is not installed), or with cornus compose build: %w",
		x.backend.Name(), errdefs.ErrNotImplemented)
}

// controlProxy forwards every call of the control API to the site.
type controlProxy struct {
	up     *grpc.ClientConn
	site   sessionSite
	policy hostpolicy.Policy
}

const solveMethod = "/moby.buildkit.v1.Control/Solve"

// forwarded are the methods a BuildKit client calls (prefixes ending in
// "/" name a whole service): its control API, the gateway a client-side
// frontend (docker buildx) drives, health, and reads of buildkitd's
// content store (buildx loads a build record's provenance from it).
// Nothing else reaches the site, however the method is spelled.
var forwarded = []string{"/moby.buildkit.v1.Control/", "/moby.buildkit.v1.frontend.LLBBridge/", "/grpc.health.v1.Health/",
	"/containerd.services.content.v1.Content/Info", "/containerd.services.content.v1.Content/Read"}

// forward relays one call, its messages both ways.
func (p *controlProxy) forward(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "no method")
	}
	if !slices.ContainsFunc(forwarded, func(m string) bool { return method == m || strings.HasSuffix(m, "/") && strings.HasPrefix(method, m) }) {
		return status.Errorf(codes.Unimplemented, "%s: not a BuildKit method cornus forwards", method)
	}
	// A solve is read and checked before the site hears of it: a refusal
	// is the client's answer.
	var first *frame
	if method == solveMethod {
		first = &frame{}
		if err := ss.RecvMsg(first); err != nil {
			return err
		}
		b, err := p.solve(first.b)
		if err != nil {
			return err
		}
		first.b = b
	}
	md, _ := metadata.FromIncomingContext(ss.Context())
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ss.Context(), md.Copy()))
	defer cancel()
	cs, err := p.up.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	if first != nil {
		if err := cs.SendMsg(first); err != nil {
			return err
		}
	}
	up := make(chan error, 1)
	go func() { up <- p.toUpstream(ss, cs) }()
	if err := p.toClient(ss, cs); err != nil {
		return err
	}
	if err := <-up; err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// toUpstream copies the client's messages up.
func (p *controlProxy) toUpstream(ss grpc.ServerStream, cs grpc.ClientStream) error {
	for {
		var f frame
		if err := ss.RecvMsg(&f); err != nil {
			_ = cs.CloseSend()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := cs.SendMsg(&f); err != nil {
			return err
		}
	}
}

// toClient copies the site's answers (headers, messages, trailer) back.
func (p *controlProxy) toClient(ss grpc.ServerStream, cs grpc.ClientStream) error {
	if md, err := cs.Header(); err == nil {
		_ = ss.SendHeader(md)
	}
	for {
		var f frame
		if err := cs.RecvMsg(&f); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(&f); err != nil {
			return err
		}
	}
}

// solve checks a solve request against the host policy and makes its
// result land in the backend's store.
func (p *controlProxy) solve(b []byte) ([]byte, error) {
	var req controlapi.SolveRequest
	if err := req.UnmarshalVT(b); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "solve request: %v", err)
	}
	if err := p.policy.CheckEntitlements("build", req.Entitlements); err != nil {
		return nil, status.Error(codes.PermissionDenied, err.Error())
	}
	p.site.solveRequest(&req)
	return req.MarshalVT()
}

// rawCodec passes messages through as they are.
type rawCodec struct{}

type frame struct{ b []byte }

func (rawCodec) Marshal(v any) ([]byte, error) { return v.(*frame).b, nil }

func (rawCodec) Unmarshal(data []byte, v any) error {
	v.(*frame).b = append([]byte(nil), data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// oneConn is a listener of one connection: Accept returns it once, then
// blocks until the connection is done.
type oneConn struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
}

var errServed = errors.New("served")

func (l *oneConn) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = &closeNotify{Conn: l.conn, done: l.done} })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, errServed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }

type closeNotify struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}
