package kubernetes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/backendtest"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

func TestNumbered(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	pod := func(name string, created int, label string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created), Labels: map[string]string{}}}
		if label != "" {
			p.Labels[labelReplica] = label
		}
		return p
	}
	// b keeps its 2; the older of two claiming 1 keeps it; the rest fill
	// the gaps oldest first, around a stopped replica's 4.
	a, b, c, d, e := pod("a", 1, "1"), pod("b", 2, "2"), pod("c", 3, "1"), pod("d", 4, ""), pod("e", 5, "x")
	got := numbered([]*corev1.Pod{e, d, c, b, a}, map[int]bool{4: true})
	want := map[*corev1.Pod]int{a: 1, b: 2, c: 3, d: 5, e: 6}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("pod %s: replica %d, want %d", p.Name, got[p], n)
		}
	}
}

func TestWorkloadContainer(t *testing.T) {
	rec := record{Name: "p-web-1", Project: "p", App: "web", Image: "img", Labels: map[string]string{backends.LabelReplica: "1"},
		Workload: "Deployment/p-web", NamePrefix: "p-web-"}
	body, _ := json.Marshal(rec)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-web-abc", UID: types.UID("u1"),
		Labels: map[string]string{labelReplica: "3"}, Annotations: map[string]string{annRecord: string(body)}}}
	c, ok := workloadContainer(p, 0)
	if !ok {
		t.Fatal("no container from a pod with a record")
	}
	if c.rec.Name != "p-web-3" || c.rec.Replica != 3 || c.rec.Labels[backends.LabelReplica] != "3" ||
		c.rec.Labels[backends.LabelWorkload] != "Deployment/p-web" || len(c.rec.ID) != 64 || c.obj() != "p-web-abc" {
		t.Fatalf("container %+v", c.rec)
	}
	if rec.Labels[backends.LabelReplica] != "1" {
		t.Fatal("the template's labels were changed")
	}
	if _, ok := workloadContainer(&corev1.Pod{}, 1); ok {
		t.Fatal("a pod without a record is a container")
	}
}

// Issue 10: an app is a Deployment (or a Job) unless the environment
// asks for a pod per replica.
func TestWorkloadsByDefault(t *testing.T) {
	for env, want := range map[string]bool{"": true, "controllers": true, "pods": false, "PODS": false} {
		c, err := configFrom(map[string]string{EnvWorkloads: env})
		if err != nil || c.controllers != want {
			t.Errorf("%s=%q: controllers %v, %v; want %v", EnvWorkloads, env, c.controllers, err, want)
		}
	}
	if _, err := configFrom(map[string]string{EnvWorkloads: "deployments"}); err == nil || !strings.Contains(err.Error(), EnvWorkloads) {
		t.Errorf("an unknown mode: %v", err)
	}
}

func TestFitsWorkload(t *testing.T) {
	b := &Backend{cfg: config{controllers: true, publish: PublishHostPort}}
	fits := backends.WorkloadSpec{Template: backends.ContainerSpec{Ports: []backends.PortMapping{{HostPort: 8080, ContainerPort: 80}}}, Replicas: 1}
	if why := b.FitsWorkload(fits); why != "" {
		t.Fatalf("plain app does not fit: %s", why)
	}
	for name, w := range map[string]backends.WorkloadSpec{
		"restart no":                 {Template: backends.ContainerSpec{Restart: spec.RestartPolicy{Name: spec.RestartNo}}, Replicas: 1},
		"ephemeral port, 2 replicas": {Template: backends.ContainerSpec{Ports: []backends.PortMapping{{ContainerPort: 80}}}, Replicas: 2},
		"companion":                  {Template: backends.ContainerSpec{Sidecar: &backends.Sidecar{}}, Replicas: 1},
	} {
		if b.FitsWorkload(w) == "" {
			t.Errorf("%s: fits a workload", name)
		}
	}
	one := backends.WorkloadSpec{Template: backends.ContainerSpec{Restart: spec.RestartPolicy{Name: spec.RestartNo}}, Replicas: 1, Complete: true}
	if why := b.FitsWorkload(one); why != "" {
		t.Fatalf("a one-shot app does not fit a Job: %s", why)
	}
	b.cfg.controllers = false
	if b.FitsWorkload(fits) == "" {
		t.Fatal("fits with " + EnvWorkloads + "=pods")
	}
}

// TestWorkloads runs a project through the engine with apps as
// controllers on the real cluster: a one-shot app as a Job, a replicated
// server as a Deployment its peers reach by name, scaled, rolled to a new
// template, and taken down with nothing left.
func TestWorkloads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := newTestBackend(t)
	e := engine.New(b, engine.WithLockDir(t.TempDir()))
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	project := "wl" + hex.EncodeToString(suffix)
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer dcancel()
		if err := e.Down(dctx, project, engine.DownOptions{Volumes: true}); err != nil {
			t.Errorf("down: %v", err)
		}
		sel := metav1.ListOptions{LabelSelector: labelProject + "=" + project}
		if pods, err := b.core.Pods(b.cfg.namespace).List(dctx, sel); err != nil || len(pods.Items) > 0 {
			t.Errorf("pods left after down: %v %v", len(pods.Items), err)
		}
		if d, err := b.apps.Deployments(b.cfg.namespace).List(dctx, sel); err == nil && len(d.Items) > 0 {
			t.Errorf("Deployments left after down: %d", len(d.Items))
		}
		if j, err := b.batch.Jobs(b.cfg.namespace).List(dctx, sel); err == nil && len(j.Items) > 0 {
			t.Errorf("Jobs left after down: %d", len(j.Items))
		}
	})
	web := spec.App{Image: backendtest.Image, Init: ptr(true), Replicas: ptr(2), Env: map[string]string{"V": "1"},
		Command:   spec.Command{"sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"},
		DependsOn: map[string]spec.Dependency{"init": {Condition: spec.ConditionCompleted}},
	}
	p := spec.Project{Name: project, Services: map[string]spec.App{
		"init":   {Image: backendtest.Image, Command: spec.Command{"sh", "-c", "echo initialized"}},
		"web":    web,
		"client": {Image: backendtest.Image, Init: ptr(true), Command: spec.Command{"sleep", "3600"}},
	}}.Normalize()
	up := func() {
		t.Helper()
		if _, err := e.Up(ctx, p, engine.UpOptions{}); err != nil {
			t.Fatalf("up: %v", err)
		}
	}
	list := func(app string) []backends.Container {
		t.Helper()
		cs, err := b.List(ctx, backends.ListOptions{All: true, Labels: map[string]string{backends.ComposeProject: project, backends.ComposeService: app}})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	sh := func(id, script string) string {
		t.Helper()
		var out bytes.Buffer
		code, err := b.Exec(ctx, id, backends.ExecOptions{Cmd: []string{"sh", "-c", script}, Stdout: &out, Stderr: &out})
		if err != nil || code != 0 {
			t.Fatalf("exec %q: code %d, %v: %s", script, code, err, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	up()

	if _, err := b.apps.Deployments(b.cfg.namespace).Get(ctx, workloadName(project, "web"), metav1.GetOptions{}); err != nil {
		t.Fatalf("web is no Deployment: %v", err)
	}
	if _, err := b.batch.Jobs(b.cfg.namespace).Get(ctx, workloadName(project, "init"), metav1.GetOptions{}); err != nil {
		t.Fatalf("init is no Job: %v", err)
	}
	inits := list("init")
	if len(inits) != 1 || inits[0].State != backends.StateExited || inits[0].ExitCode != 0 || inits[0].Labels[backends.LabelWorkload] == "" {
		t.Fatalf("init replicas: %+v", inits)
	}
	webs := list("web")
	names := map[string]bool{}
	for _, c := range webs {
		names[c.Name] = c.Running()
	}
	if len(webs) != 2 || !names[project+"-web-1"] || !names[project+"-web-2"] {
		t.Fatalf("web replicas: %v", names)
	}
	// Each replica is a container: inspect and exec by name; peers reach
	// the service and each replica by name.
	if d, err := b.Inspect(ctx, project+"-web-2"); err != nil || !d.Running() {
		t.Fatalf("inspect web-2: %+v %v", d.Container, err)
	}
	client := list("client")[0]
	for _, host := range []string{"web", project + "-web-1", project + "-web-2"} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			var out bytes.Buffer
			code, _ := b.Exec(ctx, client.ID, backends.ExecOptions{Cmd: []string{"sh", "-c", "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 " + host + " 8080"}, Stdout: &out, Stderr: &out})
			if code == 0 && strings.Contains(out.String(), "200 OK") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("client cannot reach %s: %s", host, out.String())
			}
			time.Sleep(time.Second)
		}
	}
	if v := sh(project+"-web-1", "echo $V"); v != "1" {
		t.Fatalf("V = %q", v)
	}

	// Scaling keeps the replicas there are; a new template rolls them.
	before := webs[0].ID
	web.Replicas = ptr(3)
	p.Services["web"] = web
	p = p.Normalize()
	up()
	if webs = list("web"); len(webs) != 3 {
		t.Fatalf("after scaling to 3: %d replicas", len(webs))
	}
	if !containsID(webs, before) {
		t.Fatal("scaling replaced a replica")
	}
	web.Env = map[string]string{"V": "2"}
	web.Update = &spec.UpdateConfig{Parallelism: 2, Order: spec.UpdateStartFirst}
	p.Services["web"] = web
	p = p.Normalize()
	up()
	if d, err := b.apps.Deployments(b.cfg.namespace).Get(ctx, workloadName(project, "web"), metav1.GetOptions{}); err != nil ||
		d.Spec.Strategy.RollingUpdate == nil || d.Spec.Strategy.RollingUpdate.MaxSurge.IntValue() != 2 || d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Fatalf("update start-first, 2 at a time: strategy %+v, %v", d.Spec.Strategy, err)
	}
	webs = list("web")
	if len(webs) != 3 || containsID(webs, before) {
		t.Fatalf("after the new template: %d replicas, old one kept: %v", len(webs), containsID(webs, before))
	}
	if v := sh(webs[0].ID, "echo $V"); v != "2" {
		t.Fatalf("V after the rollout = %q", v)
	}
	// A replica stops alone (the Deployment keeps one fewer) and stays a
	// container, exited, until started again under its number.
	name2 := project + "-web-2"
	if err := b.Stop(ctx, name2, backends.StopOptions{}); err != nil {
		t.Fatalf("stop web-2: %v", err)
	}
	states := func() map[string]backends.State {
		out := map[string]backends.State{}
		for _, c := range list("web") {
			out[c.Name] = c.State
		}
		return out
	}
	if st := states(); len(st) != 3 || st[name2] != backends.StateExited || st[project+"-web-1"] != backends.StateRunning || st[project+"-web-3"] != backends.StateRunning {
		t.Fatalf("after stopping web-2: %v", st)
	}
	if d, _ := b.apps.Deployments(b.cfg.namespace).Get(ctx, workloadName(project, "web"), metav1.GetOptions{}); d == nil || ptrOr(d.Spec.Replicas, 0) != 2 {
		t.Fatalf("Deployment replicas after a stop: %v", d)
	}
	if err := b.Start(ctx, name2); err != nil {
		t.Fatalf("start web-2: %v", err)
	}
	if st := states(); len(st) != 3 || st[name2] != backends.StateRunning {
		t.Fatalf("after starting web-2: %v", st)
	}
	// The whole service stops and starts as compose stop/start do.
	if err := e.Stop(ctx, project, engine.LifecycleOptions{Services: []string{"web"}}); err != nil {
		t.Fatalf("stop web: %v", err)
	}
	for n, st := range states() {
		if st != backends.StateExited {
			t.Fatalf("after stop: %s is %s", n, st)
		}
	}
	if err := e.Start(ctx, project, engine.LifecycleOptions{Services: []string{"web"}}); err != nil {
		t.Fatalf("start web: %v", err)
	}
	if st := states(); len(st) != 3 || st[project+"-web-1"] != backends.StateRunning || st[project+"-web-3"] != backends.StateRunning {
		t.Fatalf("after start: %v", st)
	}
	// A restarted replica is a new pod, the same container (name, ID),
	// reachable by its name.
	// (Pod times are whole seconds: a restart within the second it
	// started keeps StartedAt; the pod tells.)
	old, err := b.Inspect(ctx, project+"-web-1")
	if err != nil {
		t.Fatal(err)
	}
	oldPod, err := b.find(ctx, project+"-web-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Restart(ctx, project+"-web-1", backends.StopOptions{}); err != nil {
		t.Fatalf("restart web-1: %v", err)
	}
	if d, err := b.Inspect(ctx, project+"-web-1"); err != nil || !d.Running() || d.ID != old.ID || d.StartedAt.Before(old.StartedAt) {
		t.Fatalf("web-1 after restart: %+v %v", d.Container, err)
	}
	if now, err := b.find(ctx, project+"-web-1"); err != nil || now.obj() == oldPod.obj() {
		t.Fatalf("web-1 after restart is still pod %s (%v)", oldPod.obj(), err)
	}
	client = list("client")[0]
	if out := sh(client.ID, "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 "+project+"-web-1 8080"); !strings.Contains(out, "200 OK") {
		t.Fatalf("web-1 after restart unreachable by name: %s", out)
	}
	// What one replica cannot do alone is refused with what to do.
	if err := b.Rename(ctx, name2, "other"); err == nil || !strings.Contains(err.Error(), "--scale") {
		t.Fatalf("rename of a replica: %v", err)
	}
}

func containsID(cs []backends.Container, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}
