package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/kubernetes"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/spec"
)

type convertOptions struct {
	format       string
	namespace    string
	publish      string
	storageClass string
}

// newConvertCmd is `compose convert --format k8s`: the project as
// Kubernetes manifests to apply with kubectl.
func newConvertCmd(f *composeFlags, s streams) *cobra.Command {
	o := &convertOptions{}
	cmd := &cobra.Command{
		Use:   "convert --format k8s [OPTIONS]",
		Short: "Print the project as Kubernetes manifests (kubectl apply -f -)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "k8s" && o.format != "kubernetes" {
				return fmt.Errorf("--format %q: convert renders k8s (Kubernetes manifests); `cornus compose config` prints the spec", o.format)
			}
			r, err := f.load(cmd.Context(), s)
			if err != nil {
				return err
			}
			out, warns, err := kubernetes.Render(r.Project, kubernetes.RenderOptions{
				Namespace: o.namespace, Publish: o.publish, StorageClass: o.storageClass,
				Content: fileContent(s.Environ),
			})
			if err != nil {
				return err
			}
			printWarnings(s.Err, warns)
			_, err = s.Out.Write(out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.format, "format", "k8s", "Output format: k8s")
	fl.StringVarP(&o.namespace, "namespace", "n", "", "Namespace to put in every object (default: none, kubectl -n decides)")
	fl.StringVar(&o.publish, "publish", envlist.Get(s.Environ, kubernetes.EnvPublish), "Published ports: hostport, nodeport or loadbalancer (default $"+kubernetes.EnvPublish+", else hostport)")
	fl.StringVar(&o.storageClass, "storage-class", envlist.Get(s.Environ, kubernetes.EnvStorageClass), "StorageClass of the volume claims (default: the cluster's default)")
	return cmd
}

// fileContent resolves a secret's or config's content as deploying would.
func fileContent(environ []string) func(string, spec.FileMount) ([]byte, error) {
	return func(_ string, fm spec.FileMount) ([]byte, error) { return engine.FileContent(fm, lookupIn(environ)) }
}

// lookupIn looks a variable up in environ (the last one set wins).
func lookupIn(environ []string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := cutPrefix(environ[i], k+"="); ok {
				return v, true
			}
		}
		return "", false
	}
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}
