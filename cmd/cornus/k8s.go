package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/cornus-dev/cornus/backends/kubernetes"
	"github.com/cornus-dev/cornus/charts"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// newK8sCmd groups what is specific to the kubernetes backend.
func newK8sCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "k8s", Short: "Kubernetes backend helpers (CORNUS_DEPLOY_BACKEND=kubernetes)"}
	cmd.AddCommand(newK8sRBACCmd(s), newK8sManifestsCmd(s))
	return cmd
}

func newK8sRBACCmd(s streams) *cobra.Command {
	var namespace string
	cmd := &cobra.Command{
		Use:   "rbac [--namespace NS]",
		Short: "Print the ServiceAccount, Role and RoleBinding cornus needs in a namespace (kubectl apply -f -)",
		Long:  "Print the chart's templates/rbac.yaml (charts/cornus), rendered for the namespace: what cornus needs there, nothing cluster-wide.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if namespace == "" {
				namespace = envlist.Get(s.Environ, kubernetes.EnvNamespace)
			}
			docs, err := charts.Render(charts.Cornus(), charts.Options{Namespace: namespace, ShowOnly: []string{"templates/rbac.yaml"}})
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(s.Out, charts.Text(docs))
			return err
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "Namespace (default $"+kubernetes.EnvNamespace+", else "+kubernetes.DefaultNamespace+")")
	return cmd
}

func newK8sManifestsCmd(s streams) *cobra.Command {
	var (
		namespace, release string
		sets, files        []string
	)
	cmd := &cobra.Command{
		Use:   "manifests [-n NS] [--release NAME] [-f values.yaml] [--set KEY=VALUE]",
		Short: "Print the manifests of cornus serve in a cluster (the Helm chart's, rendered without Helm: kubectl apply -f -)",
		Long: "Render the cornus Helm chart (charts/cornus) as `helm template` would: the server's Deployment, Service, " +
			"ServiceAccount and Role, tokens and TLS Secrets (generated unless given), data volume. Values come from the " +
			"chart's values.yaml, then each -f file, then each --set. Create the namespace first.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			values := map[string]any{}
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				v := map[string]any{}
				if err := yaml.Unmarshal(b, &v); err != nil {
					return fmt.Errorf("values %s: %w", f, err)
				}
				charts.Merge(values, v)
			}
			for _, kv := range sets {
				if err := charts.SetValue(values, kv); err != nil {
					return err
				}
			}
			docs, err := charts.Render(charts.Cornus(), charts.Options{Release: release, Namespace: namespace, Values: values})
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(s.Out, charts.Text(docs))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&namespace, "namespace", "n", "cornus", "Namespace the server runs and deploys in")
	fl.StringVar(&release, "release", "cornus", "Release name (the objects' names)")
	fl.StringArrayVarP(&files, "values", "f", nil, "Values file (YAML), as helm's -f")
	fl.StringArrayVar(&sets, "set", nil, "KEY=VALUE, as helm's --set (dotted keys; no lists)")
	return cmd
}
