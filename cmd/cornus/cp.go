package main

import (
	"errors"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
)

func newCpCmd(f *composeFlags, s streams) *cobra.Command {
	var o clientdeploy.CopyOptions
	var all bool
	cmd := &cobra.Command{
		Use:   "cp [OPTIONS] SERVICE:SRC_PATH DEST_PATH|-\n  cornus compose cp [OPTIONS] SRC_PATH|- SERVICE:DEST_PATH",
		Short: "Copy files/folders between a service container and the local filesystem",
		Long: "Copy files or directories as docker cp does: into DEST when it is a directory, as DEST otherwise; " +
			"SRC/. copies a directory's content; - is a tar on stdin or stdout. From a service its first container " +
			"(or --index), to a service every container (or --index).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, fromService := servicePath(args[0])
			to, toService := servicePath(args[1])
			switch {
			case fromService && toService:
				return errors.New("copying between services is not supported")
			case !fromService && !toService:
				return errors.New("one of the source and the destination must be SERVICE:PATH (a local path with a colon: ./a:b)")
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			o.Stdin, o.Stdout = s.In, s.Out
			if fromService {
				o.Service = from.service
				return clientdeploy.CopyFromService(ctx, se.Engine(), t.name, o, from.path, args[1])
			}
			o.Service = to.service
			return clientdeploy.CopyToService(ctx, se.Engine(), t.name, o, args[0], to.path)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Archive, "archive", "a", false, "Archive mode (copy all uid/gid information)")
	fl.BoolVarP(&o.FollowLink, "follow-link", "L", false, "Always follow symbol link in SRC_PATH")
	fl.IntVar(&o.Index, "index", 0, "Index of the container if service has multiple replicas")
	fl.BoolVar(&all, "all", false, "Include containers created by the run command (deprecated: ignored)")
	_ = fl.MarkHidden("all")
	return cmd
}

// serviceRef is SERVICE:PATH, the path absolute in the container.
type serviceRef struct{ service, path string }

// servicePath splits SERVICE:PATH as docker cp does: a colon before any
// slash, in an argument that does not start as a local path does.
func servicePath(arg string) (serviceRef, bool) {
	if strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, ".") {
		return serviceRef{}, false
	}
	svc, p, ok := strings.Cut(arg, ":")
	if !ok || svc == "" || strings.Contains(svc, "/") {
		return serviceRef{}, false
	}
	if !path.IsAbs(p) { // relative to the container's root, as docker cp's
		p = "/" + p
	}
	return serviceRef{service: svc, path: p}, true
}
