package dockerhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/hostlock"
	"github.com/cornus-dev/cornus/spec"
)

// httpdApp serves "hello from NAME" on port 8080, its page written as a
// config file by Create.
func httpdApp(name string) (spec.App, func(*backends.ResolveInput)) {
	app := spec.App{Name: name, Command: spec.Command{"httpd", "-f", "-p", "8080", "-h", "/www"}}
	return app, func(cs *backends.ResolveInput) {
		cs.Files = append(cs.Files, backends.File{Target: "/www/index.html", Content: []byte("hello from " + name + "\n"), Mode: 0o444})
	}
}

// Locks down published ports: an ephemeral host port on 127.0.0.1 is
// reported by Inspect and List and answers.
func TestPublishedPort(t *testing.T) {
	b, ctx := setup(t)
	app, files := httpdApp("web")
	app.Ports = []spec.Port{{HostIP: "127.0.0.1", Container: 8080}}
	app.Expose = []string{"9000-9001/udp"}
	c := createApp(t, b, unique(t, "proj"), app, files)
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	d, err := b.Inspect(ctx, c.ID)
	if err != nil || len(d.Ports) != 1 {
		t.Fatalf("inspect ports: %v %+v", err, d.Ports)
	}
	p := d.Ports[0]
	if p.HostIP != "127.0.0.1" || p.HostPort == 0 || p.ContainerPort != 8080 || p.Protocol != "tcp" {
		t.Fatalf("port binding: %+v", p)
	}
	list, _ := b.List(ctx, backends.ListOptions{Labels: map[string]string{backends.LabelProject: c.Project()}})
	if len(list) != 1 || !slices.Contains(list[0].Ports, p) {
		t.Fatalf("list ports: %+v (want %+v)", list, p)
	}
	var body string
	eventually(t, 10*time.Second, "HTTP answer on the published port", func() bool {
		body, err = httpGet(fmt.Sprintf("127.0.0.1:%d", p.HostPort))
		return err == nil && strings.Contains(body, "hello from web")
	})
}

func httpGet(addr string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, "GET / HTTP/1.0\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	return string(b), err
}

// Locks down project networks: two containers on one EnsureNetwork
// network resolve each other by app name and alias; a second network is
// connected at create (API 1.41 takes one endpoint); Connect and
// Disconnect work on a running container.
func TestNetworkAliases(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	cleanupNetwork(t, b, map[string]string{backends.LabelProject: project})
	nets := map[string]spec.Network{"front": {Name: project + "_front"}, "back": {Name: project + "_back"}}
	for _, key := range []string{"front", "back"} {
		if _, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: key, Network: nets[key]}); err != nil {
			t.Fatal(err)
		}
	}
	withNets := func(cs *backends.ResolveInput) { cs.Networks = nets }

	srv, files := httpdApp("db")
	srv.Networks = []spec.NetworkAttachment{{Name: "back", Aliases: []string{"database"}}, {Name: "front"}}
	server := createApp(t, b, project, srv, files, withNets)
	cli := createApp(t, b, project, spec.App{Name: "api", Command: sh("sleep 60"), Networks: []spec.NetworkAttachment{{Name: "back"}}}, withNets)
	for _, c := range []backends.Container{server, cli} {
		if err := b.Start(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	d, err := b.Inspect(ctx, server.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"front", "back"} {
		ep, ok := d.Networks[project+"_"+key]
		if !ok || ep.IPAddress == "" || !slices.Contains(ep.Aliases, "db") || d.Networks[project+"_"+key].IPAddress != ep.IPAddress {
			t.Fatalf("network %s: %+v (networks %v)", key, ep, d.Networks)
		}
	}
	if !slices.Contains(d.Networks[project+"_back"].Aliases, "database") {
		t.Fatalf("alias missing: %+v", d.Networks[project+"_back"])
	}
	for _, host := range []string{"db", "database"} {
		var out string
		eventually(t, 10*time.Second, "HTTP via "+host, func() bool {
			_, out = execOut(t, b, cli.ID, "sh", "-c", "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 "+host+" 8080")
			return strings.Contains(out, "hello from db")
		})
	}
	// front: api is not on it until connected.
	if code, _ := execOut(t, b, cli.ID, "nslookup", "frontdb"); code == 0 {
		t.Fatal("frontdb resolves before Connect")
	}
	if err := b.Connect(ctx, project+"_front", server.ID, []string{"frontdb"}); err == nil {
		t.Fatalf("connecting twice: %v", err)
	}
	if err := b.Connect(ctx, project+"_front", cli.ID, []string{"apifront"}); err != nil {
		t.Fatal(err)
	}
	if d, _ := b.Inspect(ctx, cli.ID); !slices.Contains(d.Networks[project+"_front"].Aliases, "apifront") {
		t.Fatalf("connect aliases: %+v", d.Networks)
	}
	if err := b.Disconnect(ctx, project+"_front", cli.ID, false); err != nil {
		t.Fatal(err)
	}
	if d, _ := b.Inspect(ctx, cli.ID); len(d.Networks) != 1 {
		t.Fatalf("after disconnect: %+v", d.Networks)
	}
}

// Locks down EnsureNetwork's idempotence under concurrency: four
// goroutines with their own clients (as four processes would be) end with
// exactly one network and all get its ID, whether the duplicates fail
// (a fixed subnet overlaps) or are created and then removed (dockerd 20.10
// does not check names for this client).
func TestEnsureNetworkConcurrent(t *testing.T) {
	newTestBackend(t)
	for _, tc := range []struct {
		name    string
		subnets []spec.Subnet
	}{
		{"dynamic subnet", nil},
		// Outside dockerd's default pools (172.17–172.31/16, 192.168/20s):
		// 172.31.250.0/24 overlapped whichever network of a test running
		// beside this one got 172.31.0.0/16 (a unit-stage failure, "Pool
		// overlaps with other one on this address space").
		{"fixed subnet", []spec.Subnet{{Subnet: "10.199.250.0/24", Gateway: "10.199.250.1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := unique(t, "proj")
			labels := map[string]string{backends.LabelProject: project, backends.LabelNetwork: "default"}
			var bs []*Backend
			for range 4 {
				bs = append(bs, newTestBackend(t))
			}
			cleanupNetwork(t, bs[0], labels)
			ns := backends.NetworkSpec{Project: project, Key: "default", Network: spec.Network{
				Name: project + "_default", Labels: map[string]string{"tier": "x"}, Subnets: tc.subnets,
			}, Labels: map[string]string{"extra": "y"}}
			ids := make([]string, len(bs))
			errs := make([]error, len(bs))
			var wg sync.WaitGroup
			for i, b := range bs {
				wg.Go(func() {
					n, err := b.EnsureNetwork(testContext(t), ns)
					ids[i], errs[i] = n.ID, err
				})
			}
			wg.Wait()
			ctx := testContext(t)
			for i := range bs {
				if errs[i] != nil {
					t.Fatalf("EnsureNetwork %d: %v", i, errs[i])
				}
				if ids[i] != ids[0] {
					t.Errorf("EnsureNetwork %d returned %s, others %s", i, ids[i], ids[0])
				}
			}
			list, err := bs[0].ListNetworks(ctx, backends.ListOptions{Labels: labels})
			if err != nil || len(list) != 1 {
				t.Fatalf("want exactly one network, got %v %+v", err, list)
			}
			n := list[0]
			if n.ID != ids[0] || n.Labels["tier"] != "x" || n.Labels["extra"] != "y" || len(n.Subnets) != 1 {
				t.Fatalf("network: %+v", n)
			}
			if len(tc.subnets) > 0 && n.Subnets[0] != tc.subnets[0] {
				t.Fatalf("subnet: %+v", n.Subnets)
			}
			again, err := bs[0].EnsureNetwork(ctx, ns)
			if err != nil || again.ID != n.ID {
				t.Fatalf("second EnsureNetwork: %v %s", err, again.ID)
			}
		})
	}
}

// Locks down external networks (must exist, NotFound otherwise) and the
// refusal to adopt a network of the wanted name that is not ours.
func TestEnsureNetworkExternal(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	cleanupNetwork(t, b, map[string]string{backends.LabelProject: project})
	n, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "default", Network: spec.Network{Name: project + "_default", Internal: true}})
	if err != nil || !n.Internal || n.Driver != "bridge" {
		t.Fatalf("EnsureNetwork: %v %+v", err, n)
	}
	_, err = b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "ext", Network: spec.Network{Name: project + "-missing", External: true}})
	if !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), "external") {
		t.Fatalf("missing external network: %v (want NotFound)", err)
	}
	ext, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "ext", Network: spec.Network{Name: n.Name, External: true}})
	if err != nil || ext.ID != n.ID {
		t.Fatalf("existing external network: %v %+v", err, ext)
	}
	_, err = b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "other", Network: spec.Network{Name: n.Name}})
	if !errdefs.IsConflict(err) {
		t.Fatalf("name taken by another key: %v (want Conflict)", err)
	}
}

// Locks down the Unavailable error and its hint when no daemon listens.
func TestUnreachableDaemon(t *testing.T) {
	sock := t.TempDir() + "/none.sock"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := New(ctx, WithEnviron([]string{"CORNUS_DOCKER_SOCK=" + sock}))
	if !errdefs.IsUnavailable(err) || !strings.Contains(err.Error(), "dockerd") || !strings.Contains(err.Error(), sock) {
		t.Fatalf("err = %v, want Unavailable naming the socket and how to start dockerd", err)
	}
}

// Locks down "nothing half-created": a missing further network fails
// before anything is created, and a failure after the container exists
// (here, copying a file under a non-directory) removes it again.
func TestCreateCleansUp(t *testing.T) {
	b, ctx := setup(t)
	project := unique(t, "proj")
	cleanupNetwork(t, b, map[string]string{backends.LabelProject: project})
	if _, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Project: project, Key: "a", Network: spec.Network{Name: project + "_a"}}); err != nil {
		t.Fatal(err)
	}
	name := unique(t, "half")
	t.Cleanup(func() { _ = b.Remove(context.Background(), name, backends.RemoveOptions{Force: true, Volumes: true}) })
	_, err := b.Create(ctx, resolved(t, backends.ResolveInput{
		Project: project, Name: name, Labels: map[string]string{backends.LabelProject: project},
		App:      spec.App{Name: "x", Image: testRef, Networks: []spec.NetworkAttachment{{Name: "a"}, {Name: "missing"}}},
		Networks: map[string]spec.Network{"a": {Name: project + "_a"}, "missing": {Name: project + "_missing"}},
	}))
	if !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), project+"_missing") {
		t.Fatalf("create: %v (want NotFound naming the network)", err)
	}
	if _, err := b.Inspect(ctx, name); !errdefs.IsNotFound(err) {
		t.Fatalf("container created despite the missing network: %v", err)
	}
	_, err = b.Create(ctx, resolved(t, backends.ResolveInput{
		Project: project, Name: name, Labels: map[string]string{backends.LabelProject: project},
		App:   spec.App{Name: "x", Image: testRef},
		Files: []backends.File{{Target: "/etc/passwd/nested", Content: []byte("x")}},
	}))
	if err == nil {
		t.Fatal("create with an impossible file target succeeded")
	}
	if _, err := b.Inspect(ctx, name); !errdefs.IsNotFound(err) {
		t.Fatalf("half-created container left behind: %v", err)
	}
}

// TestEnsureNetworkConcurrentDistinct: many different networks created at
// once all succeed. dockerd 20.10 can hand the same free address pool to
// two concurrent creations ("Pool overlaps"); EnsureNetwork must retry
// rather than fail an `up` because something else created a network.
func TestEnsureNetworkConcurrentDistinct(t *testing.T) {
	b := newTestBackend(t)
	project := unique(t, "many")
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		key := fmt.Sprintf("net%d", i)
		cleanupNetwork(t, b, map[string]string{backends.LabelProject: project, backends.LabelNetwork: key})
		wg.Go(func() {
			c := newTestBackend(t) // separate clients, as separate processes
			_, errs[i] = c.EnsureNetwork(testContext(t), backends.NetworkSpec{Project: project, Key: key, Network: spec.Network{Name: project + "_" + key}})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("EnsureNetwork net%d: %v", i, err)
		}
	}
	list, err := b.ListNetworks(testContext(t), backends.ListOptions{Labels: map[string]string{backends.LabelProject: project}})
	if err != nil || len(list) != n {
		t.Fatalf("want %d networks, got %d (%v)", n, len(list), err)
	}
}

// Locks down a flake of TestEnsureNetworkConcurrent (two networks for
// one): network creations on a daemon take a host lock that every cornus
// process shares. While another holds it, EnsureNetwork creates nothing
// and gives up when its context ends; once it is free, it creates.
func TestEnsureNetworkWaitsForHostLock(t *testing.T) {
	b := newTestBackend(t)
	project := unique(t, "hostlock")
	labels := map[string]string{backends.LabelProject: project, backends.LabelNetwork: "default"}
	cleanupNetwork(t, b, labels)
	unlock, err := hostlock.Lock(testContext(t), b.lockDir, b.networkLock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { unlock() }()
	ns := backends.NetworkSpec{Project: project, Key: "default", Network: spec.Network{Name: project + "_default"}}
	ctx, cancel := context.WithTimeout(testContext(t), 2*time.Second)
	defer cancel()
	if _, err := b.EnsureNetwork(ctx, ns); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("EnsureNetwork while another holds the host lock: %v, want it to wait until its context ends", err)
	}
	if list, _ := b.ListNetworks(testContext(t), backends.ListOptions{Labels: labels}); len(list) != 0 {
		t.Fatalf("a network was created while another held the host lock: %+v", list)
	}
	unlock()
	unlock = func() {}
	if _, err := b.EnsureNetwork(testContext(t), ns); err != nil {
		t.Fatalf("EnsureNetwork once the lock is free: %v", err)
	}
}
