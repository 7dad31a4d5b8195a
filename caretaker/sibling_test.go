package caretaker

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// A companion beside its app (incus): sibling in its config and its
// attachment, sharing the volume without propagation, no privilege;
// client-local mounts and credentials refused, saying why.
func TestSiblingCompanion(t *testing.T) {
	ctx := context.Background()
	c := companions(false, true)
	c.Sibling = true
	att, ok, err := c.Attach(ctx, spec.Project{Name: "p"}, spec.App{Name: "web", Docker: true}, 1)
	if err != nil || !ok {
		t.Fatalf("companion %v: %v", ok, err)
	}
	cfg, err := Parse(att.Companion.Env[EnvConfig])
	if err != nil || !cfg.Sibling || !cfg.Remote || !cfg.Docker {
		t.Errorf("the companion's config: %+v, %v", cfg, err)
	}
	if !att.Sibling || len(att.Companion.Mounts) != 1 || att.Companion.Mounts[0].Propagation != "" || len(att.Companion.CapAdd) != 0 {
		t.Errorf("the attachment: sibling %v, mounts %+v, capAdd %v", att.Sibling, att.Companion.Mounts, att.Companion.CapAdd)
	}
	for _, a := range []spec.App{withMounts(spec.App{Name: "web"}), {Name: "web", Credentials: []spec.Credential{{Name: "tok"}}}} {
		if _, _, err := c.Attach(ctx, spec.Project{Name: "p"}, a, 1); !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), "beside the app") {
			t.Errorf("%+v beside the app: %v", a, err)
		}
	}
	c.Remote = false
	if att, ok, err := c.Attach(ctx, spec.Project{Name: "p"}, spec.App{Name: "web"}, 1); err != nil || ok || att.Sibling {
		t.Errorf("outside remote mode: companion %v, %v", ok, err)
	}
}

// The portforward role dials the replica's loopback, whatever address a
// stream names; beside the app, the address the server names, and none
// is refused.
func TestDialHandlerHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hi"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	var d net.Dialer
	dial := func(sibling bool, host string) error {
		a, b := net.Pipe()
		defer a.Close()
		go dialHandler(context.Background(), d.DialContext, sibling)(api.StreamHeader{Op: api.OpDial, Dial: &api.Dial{Port: port, Host: host}}, b)
		line, err := bufio.NewReader(a).ReadBytes('\n')
		if err != nil {
			return err
		}
		var r api.DialReply
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if r.Error != nil {
			return r.Error.Err()
		}
		return nil
	}
	if err := dial(false, "192.0.2.1"); err != nil {
		t.Errorf("in the namespace, a named host is ignored: %v", err)
	}
	if err := dial(true, "127.0.0.1"); err != nil {
		t.Errorf("beside the app, the named address: %v", err)
	}
	if err := dial(true, ""); !errdefs.IsInvalidArgument(err) {
		t.Errorf("beside the app, no address: %v", err)
	}
}
