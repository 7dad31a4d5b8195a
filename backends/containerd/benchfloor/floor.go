// Package benchfloor is the containerd floor of cornus's benchmarks
// (hack/bench): bringing a project up and down by raw parallel containerd
// and CNI calls and nothing else, to compare cornus against.
package benchfloor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends/internal/cni"
)

const network = "bench-floor_default"

// Filter is the containerd filter that finds the floor's containers: a
// ps of the floor lists them by it.
const Filter = `labels."cornus.bench"=="floor"`

// Floor makes n containers the cheapest way containerd and CNI allow: a
// network once, then per container at once a namespace, a CNI ADD, a
// container with a new snapshot, a task and its start — no monitors,
// records, hosts files or output capture. Its containers live in
// cornus's containerd namespace (where the image is) under IDs cornus
// does not know, with network state in a directory of their own.
type Floor struct {
	cli   *client.Client
	net   *cni.Manager
	image client.Image
	n     int
}

// New connects to containerd at address for n containers of image ref.
func New(address, ref, dataDir string, n int) (*Floor, error) {
	cli, err := client.New(address, client.WithDefaultNamespace("cornus"))
	if err != nil {
		return nil, err
	}
	f := &Floor{cli: cli, n: n}
	ctx := context.Background()
	if f.image, err = cli.GetImage(ctx, "docker.io/"+ref); err != nil {
		f.Close()
		return nil, fmt.Errorf("floor: image %s is not in containerd (cornus image load with CORNUS_DEPLOY_BACKEND=containerd): %w", ref, err)
	}
	if err := f.image.Unpack(ctx, "overlayfs"); err != nil {
		f.Close()
		return nil, err
	}
	if f.net, err = cni.New(dataDir); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.net.EnsureNetwork(ctx, cni.NetworkOptions{Name: network}); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Up makes and starts the containers and returns their IDs.
func (f *Floor) Up() ([]string, error) {
	ctx := context.Background()
	ids := make([]string, f.n)
	err := f.parallel(func(i int) error {
		id := fmt.Sprintf("floor-%d-%d", time.Now().UnixNano(), i)
		ids[i] = id
		netns, err := f.net.CreateNetns(ctx, id)
		if err != nil {
			return err
		}
		if _, err := f.net.Attach(ctx, cni.AttachOptions{ContainerID: id, Netns: netns, Names: []string{id},
			Networks: []cni.Endpoint{{Network: network}}}); err != nil {
			return err
		}
		ctr, err := f.cli.NewContainer(ctx, id, client.WithImage(f.image), client.WithNewSnapshot(id, f.image),
			client.WithContainerLabels(map[string]string{"cornus.bench": "floor"}),
			client.WithNewSpec(oci.WithImageConfig(f.image),
				oci.WithProcessArgs("sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done"),
				oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: netns})))
		if err != nil {
			return err
		}
		task, err := ctr.NewTask(ctx, cio.NullIO)
		if err != nil {
			return err
		}
		return task.Start(ctx)
	})
	return ids, err
}

// Down stops (SIGTERM) and removes the containers Up made.
func (f *Floor) Down(ids []string) error {
	ctx := context.Background()
	return f.parallel(func(i int) error {
		id := ids[i]
		if id == "" {
			return nil
		}
		if ctr, err := f.cli.LoadContainer(ctx, id); err == nil {
			if task, err := ctr.Task(ctx, nil); err == nil {
				if exit, err := task.Wait(ctx); err == nil && task.Kill(ctx, syscall.SIGTERM) == nil {
					<-exit
				}
				_, _ = task.Delete(ctx, client.WithProcessKill)
			}
			if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil {
				return err
			}
		}
		if _, err := f.net.Detach(ctx, cni.DetachOptions{ContainerID: id}); err != nil {
			return err
		}
		return f.net.RemoveNetns(ctx, id)
	})
}

func (f *Floor) parallel(fn func(i int) error) error {
	errs := make([]error, f.n)
	var wg sync.WaitGroup
	for i := range f.n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close removes the network and disconnects.
func (f *Floor) Close() {
	if f.net != nil {
		_ = f.net.RemoveNetwork(context.Background(), network)
	}
	_ = f.cli.Close()
}
