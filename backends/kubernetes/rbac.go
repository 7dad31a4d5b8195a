package kubernetes

import (
	_ "embed"
	"regexp"
)

// rbacYAML is the ServiceAccount, Role and RoleBinding the backend needs,
// written for namespace "cornus"; embedded so `cornus k8s rbac` prints
// exactly the file the tests apply (scripts/k8s.sh).
//
//go:embed rbac.yaml
var rbacYAML string

// namespaceLine matches the manifest's namespace fields.
var namespaceLine = regexp.MustCompile(`(?m)^(\s+namespace:) cornus$`)

// RBAC returns the ServiceAccount, Role and RoleBinding the backend needs
// in namespace.
func RBAC(namespace string) string {
	if namespace == "" || namespace == "cornus" {
		return rbacYAML
	}
	return namespaceLine.ReplaceAllString(rbacYAML, "$1 "+namespace)
}
