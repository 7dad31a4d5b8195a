package translate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// TestServiceFieldsComplete fails when compose-go has a service attribute
// that serviceFields does not classify (so a new field cannot slip through
// silently) or when serviceFields names one compose-go no longer has.
func TestServiceFieldsComplete(t *testing.T) {
	attrs := compose.ServiceAttributes()
	if len(attrs) < 90 {
		t.Fatalf("found only %d service attributes: is the reflection walk broken?", len(attrs))
	}
	for name := range attrs {
		if _, ok := serviceFields[name]; !ok {
			t.Errorf("compose attribute %q is not classified in serviceFields: map it or give the reason it is ignored", name)
		}
	}
	for name := range serviceFields {
		if _, ok := attrs[name]; !ok {
			t.Errorf("serviceFields lists %q, which compose-go's ServiceConfig no longer has", name)
		}
	}
}

// sample sets one attribute on service "s" of a small project.
type sample struct {
	yaml  string            // lines added under services.s (indented by the test)
	top   string            // extra top-level YAML
	files map[string]string // extra files in the project directory
	noImg bool              // the sample replaces image
}

// samples holds one sample per Compose service attribute.
// TestEveryAttributeMappedOrWarned requires one for each.
var samples = map[string]sample{
	"annotations":         {yaml: "annotations: {a: b}"},
	"attach":              {yaml: "attach: false"},
	"blkio_config":        {yaml: "blkio_config: {weight: 300}"},
	"build":               {yaml: "build: .", noImg: true},
	"cap_add":             {yaml: "cap_add: [NET_ADMIN]"},
	"cap_drop":            {yaml: "cap_drop: [ALL]"},
	"cgroup":              {yaml: "cgroup: host"},
	"cgroup_parent":       {yaml: "cgroup_parent: custom"},
	"command":             {yaml: "command: [sleep, '1']"},
	"configs":             {yaml: "configs: [c1]", top: "configs: {c1: {content: hi}}"},
	"container_name":      {yaml: "container_name: fixed"},
	"cpu_count":           {yaml: "cpu_count: 2"},
	"cpu_percent":         {yaml: "cpu_percent: 50"},
	"cpu_period":          {yaml: "cpu_period: 100000"},
	"cpu_quota":           {yaml: "cpu_quota: 50000"},
	"cpu_rt_period":       {yaml: "cpu_rt_period: 1000"},
	"cpu_rt_runtime":      {yaml: "cpu_rt_runtime: 100"},
	"cpu_shares":          {yaml: "cpu_shares: 512"},
	"cpus":                {yaml: "cpus: 0.5"},
	"cpuset":              {yaml: "cpuset: '0'"},
	"credential_spec":     {yaml: "credential_spec: {file: x.json}"},
	"depends_on":          {yaml: "depends_on: [other]"},
	"deploy":              {yaml: "deploy: {replicas: 3}"},
	"develop":             {yaml: "develop: {watch: [{path: ., action: rebuild}]}"},
	"device_cgroup_rules": {yaml: "device_cgroup_rules: ['c 1:3 mr']"},
	"devices":             {yaml: "devices: ['/dev/null:/dev/xnull']"},
	"dns":                 {yaml: "dns: [1.1.1.1]"},
	"dns_opt":             {yaml: "dns_opt: [use-vc]"},
	"dns_search":          {yaml: "dns_search: [example.com]"},
	"dockerfile":          {}, // not accepted by the Compose schema at service level
	"domainname":          {yaml: "domainname: example.com"},
	"entrypoint":          {yaml: "entrypoint: [/bin/sh]"},
	"env_file":            {yaml: "env_file: [a.env]", files: map[string]string{"a.env": "FROM_FILE=1\n"}},
	"environment":         {yaml: "environment: {A: '1'}"},
	"expose":              {yaml: "expose: ['3000']"},
	"extends":             {yaml: "extends: {service: base}", top: "x-unused: 1", files: nil},
	"external_links":      {yaml: "external_links: [redis:cache]"},
	"extra_hosts":         {yaml: "extra_hosts: ['db.local:10.0.0.2']"},
	"gpus":                {yaml: "gpus: all"},
	"group_add":           {yaml: "group_add: [audio]"},
	"healthcheck":         {yaml: "healthcheck: {test: [CMD, 'true']}"},
	"hostname":            {yaml: "hostname: h1"},
	"image":               {yaml: "image: alpine", noImg: true},
	"init":                {yaml: "init: true"},
	"ipc":                 {yaml: "ipc: host"},
	"isolation":           {yaml: "isolation: process"},
	"label_file":          {yaml: "label_file: [l.txt]", files: map[string]string{"l.txt": "from.file=1\n"}},
	"labels":              {yaml: "labels: {a: b}"},
	"links":               {yaml: "links: ['other:alias']"},
	"log_driver":          {}, // legacy: rejected by the Compose schema
	"log_opt":             {}, // legacy: rejected by the Compose schema
	"logging":             {yaml: "logging: {driver: json-file}"},
	"mac_address":         {yaml: "mac_address: '02:42:ac:11:00:02'"},
	"mem_limit":           {yaml: "mem_limit: 64m"},
	"mem_reservation":     {yaml: "mem_reservation: 32m"},
	"mem_swappiness":      {yaml: "mem_swappiness: 10"},
	"memswap_limit":       {yaml: "memswap_limit: 128m"},
	"models":              {yaml: "models: [m1]", top: "models: {m1: {model: ai/smollm2}}"},
	"net":                 {}, // legacy: rejected by the Compose schema
	"network_mode":        {yaml: "network_mode: host"},
	"networks":            {yaml: "networks: [n1]", top: "networks: {n1: {}}"},
	"oom_kill_disable":    {yaml: "oom_kill_disable: true"},
	"oom_score_adj":       {yaml: "oom_score_adj: 100"},
	"pid":                 {yaml: "pid: host"},
	"pids_limit":          {yaml: "pids_limit: 100"},
	"platform":            {yaml: "platform: linux/amd64"},
	"ports":               {yaml: "ports: ['8080:80']"},
	"post_start":          {yaml: "post_start: [{command: [echo, hi]}]"},
	"pre_start":           {yaml: "pre_start: [{command: [echo, hi]}]"},
	"pre_stop":            {yaml: "pre_stop: [{command: [echo, bye]}]"},
	"privileged":          {yaml: "privileged: true"},
	"profiles":            {yaml: "profiles: [debug]"},
	"provider":            {yaml: "provider: {type: model}", noImg: true},
	"pull_policy":         {yaml: "pull_policy: never"},
	"pull_refresh_after":  {yaml: "pull_policy: refresh\n    pull_refresh_after: 1h"},
	"read_only":           {yaml: "read_only: true"},
	"restart":             {yaml: "restart: always"},
	"runtime":             {yaml: "runtime: runsc"},
	"scale":               {yaml: "scale: 2"},
	"secrets":             {yaml: "secrets: [s1]", top: "secrets: {s1: {file: ./s.txt}}", files: map[string]string{"s.txt": "pw"}},
	"security_opt":        {yaml: "security_opt: ['no-new-privileges:true']"},
	"shm_size":            {yaml: "shm_size: 128m"},
	"stdin_open":          {yaml: "stdin_open: true"},
	"stop_grace_period":   {yaml: "stop_grace_period: 3s"},
	"stop_signal":         {yaml: "stop_signal: SIGINT"},
	"storage_opt":         {yaml: "storage_opt: {size: 1G}"},
	"sysctls":             {yaml: "sysctls: {net.core.somaxconn: '1024'}"},
	"tmpfs":               {yaml: "tmpfs: [/run]"},
	"tty":                 {yaml: "tty: true"},
	"ulimits":             {yaml: "ulimits: {nofile: 1024}"},
	"umask":               {yaml: "umask: 0022"},
	"use_api_socket":      {yaml: "use_api_socket: true"},
	"user":                {yaml: "user: '1000'"},
	"userns_mode":         {yaml: "userns_mode: host"},
	"uts":                 {yaml: "uts: host"},
	"volume_driver":       {}, // legacy: rejected by the Compose schema
	"volumes":             {yaml: "volumes: ['v1:/data']", top: "volumes: {v1: {}}"},
	"volumes_from":        {yaml: "volumes_from: [other]"},
	"working_dir":         {yaml: "working_dir: /app"},
}

// translateSample loads and translates a project with service "s" carrying
// the sample, "other" and "base" as plain neighbours.
func translateSample(t *testing.T, s sample) (spec.Project, []spec.Warning, error) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("name: fields\nservices:\n  s:\n")
	if !s.noImg {
		b.WriteString("    image: busybox\n")
	}
	for _, l := range strings.Split(s.yaml, "\n") {
		if l != "" {
			b.WriteString("    " + strings.TrimSpace(l) + "\n")
		}
	}
	b.WriteString("  other: {image: busybox}\n  base: {image: busybox, environment: {FROM_BASE: '1'}}\n")
	b.WriteString(s.top + "\n")
	files := map[string]string{"compose.yaml": b.String()}
	for k, v := range s.files {
		files[k] = v
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lr, err := compose.Load(context.Background(), compose.Options{WorkingDir: dir})
	if err != nil {
		return spec.Project{}, nil, err
	}
	p, warns := Translate(lr.Project)
	return p, warns, nil
}

// TestEveryAttributeMappedOrWarned sets each Compose service attribute in
// turn and checks that it either changes the translated spec or produces a
// warning naming it: nothing is dropped silently (issue #2).
func TestEveryAttributeMappedOrWarned(t *testing.T) {
	base, baseWarns, err := translateSample(t, sample{})
	if err != nil {
		t.Fatal(err)
	}
	if len(baseWarns) != 0 {
		t.Fatalf("baseline has warnings: %v", baseWarns)
	}
	names := make([]string, 0, len(compose.ServiceAttributes()))
	for n := range compose.ServiceAttributes() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, attr := range names {
		t.Run(attr, func(t *testing.T) {
			s, ok := samples[attr]
			if !ok {
				t.Fatalf("no sample for %q: add one to samples", attr)
			}
			if s.yaml == "" {
				if _, _, err := translateSample(t, sample{yaml: attr + ": x"}); err == nil {
					t.Fatalf("%q has no sample because Compose rejects it, but it loaded", attr)
				}
				return
			}
			got, warns, err := translateSample(t, s)
			if err != nil {
				t.Fatalf("sample does not load: %v", err)
			}
			for _, w := range warns {
				if w.Service == "s" && strings.HasPrefix(w.Field, attr) {
					if serviceFields[attr] != mapped && !strings.Contains(w.Message, serviceFields[attr]) {
						t.Errorf("warning %q does not give the reason %q", w, serviceFields[attr])
					}
					return
				}
			}
			if serviceFields[attr] != mapped {
				t.Errorf("%q is classified as ignored (%s) but no warning named it; warnings: %v", attr, serviceFields[attr], warns)
			}
			if reflect.DeepEqual(got, base) {
				t.Errorf("%q neither changed the spec nor produced a warning", attr)
			}
		})
	}
}

// TestUpdateConfig: deploy.update_config's batch size and order reach the
// spec (a backend that rolls replicas out honors them); swarm's rollout
// monitoring is warned by name.
func TestUpdateConfig(t *testing.T) {
	p, warns, err := translateSample(t, sample{yaml: "deploy: {update_config: {parallelism: 2, order: start-first, delay: 5s, failure_action: rollback}}"})
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Services["s"].Update; u == nil || u.Parallelism != 2 || u.Order != spec.UpdateStartFirst {
		t.Fatalf("update = %+v", u)
	}
	var fields []string
	for _, w := range warns {
		fields = append(fields, w.Field)
	}
	sort.Strings(fields)
	if want := []string{"deploy.update_config.delay", "deploy.update_config.failure_action"}; !reflect.DeepEqual(fields, want) {
		t.Fatalf("warned %v, want %v", fields, want)
	}
	// Compose's parallelism 0 is swarm's "all at once", not one at a time.
	p, _, err = translateSample(t, sample{yaml: "deploy: {update_config: {parallelism: 0}}"})
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Services["s"].Update; u == nil || u.Parallelism != spec.UpdateAllAtOnce {
		t.Fatalf("parallelism 0: update = %+v", u)
	}
}
