// Package deploy holds the manifests cornus ships for running it against
// a platform, embedded so the binary prints exactly the files in the
// repository: kubernetes/rbac.yaml (`cornus k8s rbac`). It imports
// nothing of cornus's.
package deploy

import (
	_ "embed"
	"regexp"
)

//go:embed kubernetes/rbac.yaml
var kubernetesRBAC string

// namespaceLine matches the manifest's namespace fields.
var namespaceLine = regexp.MustCompile(`(?m)^(\s+namespace:) cornus$`)

// KubernetesRBAC is the ServiceAccount, Role and RoleBinding the
// kubernetes backend needs in namespace (the file is written for
// "cornus").
func KubernetesRBAC(namespace string) string {
	if namespace == "" || namespace == "cornus" {
		return kubernetesRBAC
	}
	return namespaceLine.ReplaceAllString(kubernetesRBAC, "$1 "+namespace)
}
