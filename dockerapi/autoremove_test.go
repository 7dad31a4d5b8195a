package dockerapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/dockerhost"
)

// logAttacher streams a container's output as the kubernetes backend does
// for an attach made before start: from its log, read once it has run
// (here, late on purpose: after it exited).
type logAttacher struct{ *dockerhost.Backend }

func (b logAttacher) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	if o.Attached != nil {
		o.Attached()
	}
	if _, err := b.Wait(ctx, id); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	return b.Logs(ctx, id, backends.LogOptions{Tail: -1, Stdout: o.Stdout, Stderr: cmpWriter(o.Stderr, io.Discard)})
}

func cmpWriter(w, or io.Writer) io.Writer {
	if w == nil {
		return or
	}
	return w
}

// TestAutoRemoveAfterAttachDrains: docker run --rm (HostConfig.AutoRemove)
// removes the container only once its attach streams ended, so a backend
// that streams output from the container's log delivers all of it. The
// proxy removed at exit, and a kubernetes `compose run --rm` through it
// lost its output in CI.
func TestAutoRemoveAfterAttachDrains(t *testing.T) {
	ts := newTestServerOver(t, func(b backends.Backend) backends.Backend { return logAttacher{b.(*dockerhost.Backend)} })
	status, resp, _ := ts.do("POST", "/v1.47/containers/create?name="+ts.label+"-rm",
		`{"Image":"`+testImage+`","Cmd":["echo","from-rm"],"Labels":{"cornus.test":"`+ts.label+`"},"HostConfig":{"AutoRemove":true}}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, resp)
	}
	id := ts.label + "-rm"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := ts.client.Transport.(*http.Transport).DialContext(ctx, "unix", "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(conn, "POST /v1.47/containers/%s/attach?stream=1&stdout=1&stderr=1 HTTP/1.1\r\nHost: cornus\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n", id)
	rd := bufio.NewReader(conn)
	up, err := http.ReadResponse(rd, nil)
	if err != nil || up.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("attach: %v %v", up, err)
	}
	if status, body, _ := ts.do("POST", "/v1.47/containers/"+id+"/start", ""); status != http.StatusNoContent {
		t.Fatalf("start: %d %s", status, body)
	}
	out, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("attach stream: %v (read %q)", err, out)
	}
	if !strings.Contains(string(out), "from-rm") {
		t.Fatalf("the attach stream lost the output of an auto-removed container: %q", out)
	}
	eventually(t, "the container is removed once the stream ended", func() bool {
		_, err := ts.b.Inspect(ctx, id)
		return errdefs.IsNotFound(err)
	})
}
