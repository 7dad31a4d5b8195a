// Package charts holds cornus's Helm chart (charts/cornus: cornus serve in
// a cluster with the kubernetes backend), embedded, and renders it without
// Helm: `cornus k8s manifests` prints the same objects `helm template`
// does, and `cornus k8s rbac` the chart's RBAC alone, so the chart is the
// one source of both. Render implements the template functions the chart
// uses, as Helm's (sprig's) do; a test compares its output with helm's.
package charts
