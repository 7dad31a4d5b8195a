package caretaker

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// A companion beside its app (incus): sibling in its config and its
// attachment, sharing the volume without propagation, no privilege; a
// file credential in that volume, in memory; the AWS endpoint on a
// socket there; a client-local mount refused, saying why.
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
	// A file credential: in the shared volume, itself in memory; nothing
	// the companion mounts.
	att, _, err = c.Attach(ctx, spec.Project{Name: "p"}, spec.App{Name: "web", Credentials: []spec.Credential{{Name: "tok"}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ = Parse(att.Companion.Env[EnvConfig])
	want := spec.Mount{Source: "/var/lib/fake/cornus-caretaker-web-1/credentials", Target: spec.CredentialDir, ReadOnly: true}
	if cfg.MountCredentials || len(att.Companion.CapAdd) != 0 || !slices.Contains(att.AppMounts, want) {
		t.Errorf("a file credential beside the app: mounts it %v, capAdd %v, the app's mounts %+v", cfg.MountCredentials, att.Companion.CapAdd, att.AppMounts)
	}
	// The AWS endpoint: the app's loopback port passed to its socket in
	// the shared volume.
	att, _, err = c.Attach(ctx, spec.Project{Name: "p"}, spec.App{Name: "web", Credentials: []spec.Credential{{Name: "aws", Deliver: spec.DeliverAWS}}}, 1)
	wantLoop := []backends.LoopbackSocket{{Port: CredentialPort, Socket: "/var/lib/fake/cornus-caretaker-web-1/aws/endpoint.sock"}}
	if err != nil || !slices.Equal(att.AppLoopback, wantLoop) || !strings.HasPrefix(att.AppEnv[EnvAWSCredentialsURI], "http://127.0.0.1:15002/") {
		t.Errorf("an AWS credential beside the app: loopback %+v, env %v, %v", att.AppLoopback, att.AppEnv, err)
	}
	if _, _, err := c.Attach(ctx, spec.Project{Name: "p"}, withMounts(spec.App{Name: "web"}), 1); !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), "beside the app") {
		t.Errorf("a client-local mount beside the app: %v", err)
	}
	// A shared volume on disk (an earlier cornus made it) holds no credential.
	c.Backend.(*fakeBackend).onDisk = true
	if _, _, err := c.Attach(ctx, spec.Project{Name: "p"}, spec.App{Name: "web", Credentials: []spec.Credential{{Name: "tok"}}}, 1); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("credentials in a volume on disk: %v", err)
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
