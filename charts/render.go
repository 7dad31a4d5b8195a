package charts

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// Options say what to render.
type Options struct {
	Release   string         // the release's name ("cornus" when empty)
	Namespace string         // its namespace ("cornus" when empty)
	Service   string         // .Release.Service ("cornus" when empty; Helm says "Helm")
	Values    map[string]any // merged over values.yaml (Merge, SetValue)
	ShowOnly  []string       // template files to render (templates/x.yaml); all when empty
}

// Document is one rendered object, with the template it came from.
type Document struct {
	Source string // cornus/templates/x.yaml
	Kind   string
	YAML   string
}

// Render renders the chart in chart (Cornus()) as helm template does:
// each template file but helpers and NOTES.txt, split into documents,
// empty ones dropped, ordered by kind as Helm installs them.
func Render(chart fs.FS, o Options) ([]Document, error) {
	meta, values, err := load(chart)
	if err != nil {
		return nil, err
	}
	Merge(values, o.Values)
	o.Release, o.Namespace, o.Service = or(o.Release, "cornus"), or(o.Namespace, "cornus"), or(o.Service, "cornus")
	root := template.New("chart").Option("missingkey=zero")
	root.Funcs(funcs(root))
	names, err := fs.Glob(chart, "templates/*")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		b, err := fs.ReadFile(chart, n)
		if err != nil {
			return nil, err
		}
		if _, err := root.New(path.Join(meta.Name, n)).Parse(string(b)); err != nil {
			return nil, fmt.Errorf("chart %s: %w", n, err)
		}
	}
	data := map[string]any{
		"Values":  values,
		"Release": map[string]any{"Name": o.Release, "Namespace": o.Namespace, "Service": o.Service, "IsInstall": true, "IsUpgrade": false, "Revision": 1},
		"Chart":   map[string]any{"Name": meta.Name, "Version": meta.Version, "AppVersion": meta.AppVersion},
	}
	var docs []Document
	for _, n := range names {
		base := path.Base(n)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" || len(o.ShowOnly) > 0 && !slices.Contains(o.ShowOnly, n) {
			continue
		}
		var buf bytes.Buffer
		src := path.Join(meta.Name, n)
		if err := root.ExecuteTemplate(&buf, src, data); err != nil {
			return nil, fmt.Errorf("render %s: %w", src, err)
		}
		ds, err := split(src, strings.ReplaceAll(buf.String(), "<no value>", ""))
		if err != nil {
			return nil, err
		}
		docs = append(docs, ds...)
	}
	slices.SortStableFunc(docs, func(a, b Document) int { return installRank(a.Kind) - installRank(b.Kind) })
	return docs, nil
}

// Text joins documents as helm template prints them.
func Text(docs []Document) string {
	var b strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", d.Source, d.YAML)
	}
	return b.String()
}

type chartMeta struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}

func load(chart fs.FS) (chartMeta, map[string]any, error) {
	var m chartMeta
	b, err := fs.ReadFile(chart, "Chart.yaml")
	if err == nil {
		err = yaml.Unmarshal(b, &m)
	}
	if err != nil {
		return m, nil, fmt.Errorf("chart: Chart.yaml: %w", err)
	}
	values := map[string]any{}
	b, err = fs.ReadFile(chart, "values.yaml")
	if err == nil {
		err = yaml.Unmarshal(b, &values)
	}
	if err != nil {
		return m, nil, fmt.Errorf("chart: values.yaml: %w", err)
	}
	return m, values, nil
}

// split cuts a rendered template into its documents, dropping those with
// nothing but comments and blank lines (Helm drops the empty ones).
func split(src, text string) ([]Document, error) {
	var docs []Document
	for _, part := range strings.Split(text, "\n---") {
		part = strings.TrimPrefix(strings.TrimPrefix(part, "---"), "\n")
		if strings.TrimSpace(stripComments(part)) == "" {
			continue
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(part), &head); err != nil {
			return nil, fmt.Errorf("render %s: not YAML: %w", src, err)
		}
		docs = append(docs, Document{Source: src, Kind: head.Kind, YAML: strings.TrimRight(part, "\n")})
	}
	return docs, nil
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// installOrder is the order Helm installs kinds in (pkg/release/util's
// InstallOrder); unknown kinds go last.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
	"ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList",
	"Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
	"ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
}

func installRank(kind string) int {
	if i := slices.Index(installOrder, kind); i >= 0 {
		return i
	}
	return len(installOrder)
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
