package createbody

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// TestRoundTrip locks down that the two directions agree: an app resolved
// and sent as a create body (FromSpec, what dockerhost sends) reads back
// (ToApp, what the proxy receives) into the same resolved spec.
func TestRoundTrip(t *testing.T) {
	identity := map[string]string{
		backends.LabelProject: "shop", backends.LabelApp: "web", backends.LabelReplica: "2",
		backends.ComposeProject: "shop", backends.ComposeService: "web", backends.ComposeNumber: "2",
	}
	app := spec.App{
		Name: "web", Image: "img:1", Restart: "on-failure:3",
		Command: spec.Command{"serve", "--port", "80"}, Entrypoint: spec.Command{"/bin/app"},
		WorkingDir: "/srv", User: "1000:1000", GroupAdd: []string{"audio"},
		Env: map[string]string{"A": "1", "B": "x=y"}, Labels: map[string]string{"team": "core"},
		Hostname: "h", Domainname: "example.org",
		Ports:    []spec.Port{{HostIP: "127.0.0.1", Host: 8000, HostEnd: 8010, Container: 80}, {Container: 53, Protocol: "udp"}},
		Expose:   []string{"53/udp", "80/tcp", "9000/tcp"},
		Networks: []spec.NetworkAttachment{{Name: "front", Aliases: []string{"www"}, IPv4: "10.5.0.9"}},
		DNS:      []string{"1.1.1.1"}, DNSSearch: []string{"example.org"}, DNSOptions: []string{"ndots:2"},
		ExtraHosts: map[string][]string{"db": {"10.0.0.2"}},
		Mounts:     []spec.Mount{{Source: "/src", Target: "/dst", ReadOnly: true, Propagation: "rslave"}},
		Volumes:    []spec.VolumeMount{{Source: "data", Target: "/data", NoCopy: true}, {Target: "/anon"}},
		Tmpfs:      []spec.Tmpfs{{Target: "/run", Size: 1 << 20, Mode: 0o1777}},
		Healthcheck: &spec.Healthcheck{Test: []string{"CMD", "true"}, Interval: spec.DurationOf(time.Second),
			Timeout: spec.DurationOf(2 * time.Second), StartPeriod: spec.DurationOf(3 * time.Second), Retries: ptr(4)},
		Resources: &spec.Resources{
			Limits:       &spec.ResourceLimits{CPUs: 1.5, Memory: 1 << 30, Pids: 100},
			Reservations: &spec.ResourceLimits{Memory: 1 << 29},
		},
		StopSignal: "SIGINT", StopGracePeriod: spec.DurationOf(3 * time.Second), Init: ptr(true),
		TTY: true, StdinOpen: true, ReadOnly: true,
		CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"MKNOD"}, SecurityOpt: []string{"no-new-privileges:true"},
		Devices: []spec.Device{{Source: "/dev/fuse", Target: "/dev/fuse", Permissions: "rwm"}},
		Sysctls: map[string]string{"net.core.somaxconn": "1024"},
		Ulimits: map[string]spec.Ulimit{"nofile": {Soft: 1000, Hard: 2000}},
		ShmSize: 64 << 20, IpcMode: "none", PidMode: "container:abc", UTSMode: "host",
		UsernsMode: "host", CgroupnsMode: "private", DeviceCgroupRules: []string{"c 1:3 mr"},
		Logging: &spec.Logging{Driver: "json-file", Options: map[string]string{"max-size": "1m"}},
	}
	first, err := backends.Resolve(backends.ResolveInput{
		Project: "shop", App: app, Replica: 2, Name: "shop-web-2", Labels: identity, StdinOnce: true,
		Networks: map[string]spec.Network{"front": {Name: "shop_front"}},
		Volumes:  map[string]spec.Volume{"data": {Name: "shop_data"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := FromSpec(first, Options{StartInterval: true, Subpath: true})
	if err != nil {
		t.Fatal(err)
	}
	// Over the wire, as a client sends it.
	wire, err := json.Marshal(container.CreateRequest{Config: req.Config, HostConfig: req.HostConfig, NetworkingConfig: req.Networking})
	if err != nil {
		t.Fatal(err)
	}
	var body container.CreateRequest
	if err := json.Unmarshal(wire, &body); err != nil {
		t.Fatal(err)
	}
	in, warns, err := ToApp(Input{Req: body, Name: "shop-web-2", Networks: map[string]string{"shop_front": "shop_front"}})
	if err != nil || len(warns) != 0 {
		t.Fatalf("ToApp: %v %v", err, warns)
	}
	second, err := backends.Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	// The proxy keys networks by runtime name; the engine by project key.
	for i := range second.Networks {
		second.Networks[i].Key = first.Networks[i].Key
	}
	if !reflect.DeepEqual(first, second) {
		a, _ := json.MarshalIndent(first, "", " ")
		b, _ := json.MarshalIndent(second, "", " ")
		t.Errorf("round trip differs:\n--- sent\n%s\n--- read back\n%s", a, b)
	}
}

// hostConfigNotRead lists the HostConfig fields the proxy does not read,
// each with the reviewed reason. Every other field, set, must change what
// ToApp returns, warn, or fail: nothing a client sends is dropped silently.
var hostConfigNotRead = map[string]string{
	"ContainerIDFile": "written by the docker CLI itself, never by the daemon",
	"AutoRemove":      "the proxy honors it itself (removes the container when it exits)",
	"ConsoleSize":     "the initial TTY size: the proxy applies resizes as they come",
	"Annotations":     "OCI annotations carry no behaviour cornus honors",
	"Isolation":       "Windows only",
	"KernelMemory":    "deprecated and ignored by dockerd",
	"KernelMemoryTCP": "deprecated and ignored by dockerd",
	"OomKillDisable":  "ignored by dockerd on cgroup v2 and refused by this kernel on v1",
}

// TestHostConfigComplete sets each HostConfig field (and each of its
// Resources) and requires ToApp to notice: a new field in moby's types
// cannot slip through unread.
func TestHostConfigComplete(t *testing.T) {
	base := func() container.CreateRequest {
		exposed := network.PortSet{}
		p, _ := network.ParsePort("80/tcp")
		exposed[p] = struct{}{}
		return container.CreateRequest{Config: &container.Config{Image: "img", ExposedPorts: exposed}, HostConfig: &container.HostConfig{}}
	}
	read := func(req container.CreateRequest) string {
		in, warns, err := ToApp(Input{Req: req, Name: "c", Networks: map[string]string{"x": "x", "bridge": "bridge"}})
		b, _ := json.Marshal(in.App)
		v, _ := json.Marshal(in.Volumes)
		return fmt.Sprintf("%s %s %v %v %v", b, v, warns, err, in.StdinOnce)
	}
	want := read(base())
	var fields []reflect.StructField
	hc := reflect.TypeFor[container.HostConfig]()
	for i := range hc.NumField() {
		f := hc.Field(i)
		if f.Anonymous && f.Type == reflect.TypeFor[container.Resources]() {
			for j := range f.Type.NumField() {
				fields = append(fields, f.Type.Field(j))
			}
			continue
		}
		fields = append(fields, f)
	}
	for _, f := range fields {
		if _, ok := hostConfigNotRead[f.Name]; ok {
			continue
		}
		req := base()
		fv := reflect.ValueOf(req.HostConfig).Elem().FieldByName(f.Name)
		if !fv.CanSet() {
			continue
		}
		setSample(fv)
		if read(req) == want {
			t.Errorf("HostConfig.%s (%s) set is not read: map it, warn, or list it in hostConfigNotRead with the reason", f.Name, f.Type)
		}
	}
}

// setSample sets v to a non-zero value of its type.
func setSample(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setSample(v.Elem())
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		setSample(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		setSample(k)
		setSample(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[network.Port]() {
			p, _ := network.ParsePort("80/tcp")
			v.Set(reflect.ValueOf(p))
			return
		}
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				setSample(v.Field(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			setSample(v.Index(i))
		}
	}
}
