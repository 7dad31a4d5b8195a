package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/kubernetes"
)

// newK8sCmd groups what is specific to the kubernetes backend.
func newK8sCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "k8s", Short: "Kubernetes backend helpers (CORNUS_DEPLOY_BACKEND=kubernetes)"}
	cmd.AddCommand(newK8sRBACCmd(s))
	return cmd
}

func newK8sRBACCmd(s streams) *cobra.Command {
	var namespace string
	cmd := &cobra.Command{
		Use:   "rbac [--namespace NS]",
		Short: "Print the ServiceAccount, Role and RoleBinding cornus needs in a namespace (kubectl apply -f -)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if namespace == "" {
				namespace = envValue(s.Environ, kubernetes.EnvNamespace)
			}
			_, err := fmt.Fprint(s.Out, kubernetes.RBAC(namespace))
			return err
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "Namespace (default $"+kubernetes.EnvNamespace+", else "+kubernetes.DefaultNamespace+")")
	return cmd
}
