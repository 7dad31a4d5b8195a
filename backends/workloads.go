package backends

import (
	"context"
	"time"

	"github.com/cornus-dev/cornus/spec"
)

// Workloads is implemented by a backend that can run an app's replicas as
// one object its runtime keeps (a Kubernetes Deployment, or a Job for an
// app run to completion): the engine applies the app in one call instead
// of creating its replicas one by one, and the runtime replaces a replica
// that goes away. The replicas are still containers to every other call
// (List, Inspect, Exec, Logs, Stop, Start, ...), labelled LabelWorkload.
type Workloads interface {
	// FitsWorkload reports why the app cannot run as a workload (an
	// ephemeral host port several replicas would share, ...), "" when it
	// can; the engine then runs it replica by replica.
	FitsWorkload(w WorkloadSpec) string
	// ApplyWorkload creates the app's workload, or updates it to the new
	// template and number of replicas (a rolling update), and waits until
	// every replica of the template has started (or, run to completion,
	// ran). An unchanged workload is left alone unless Force.
	ApplyWorkload(ctx context.Context, w WorkloadSpec) (WorkloadResult, error)
	// RemoveWorkload stops the app's replicas (each with its stop signal
	// and grace, or timeout) and deletes the workload and what it owns;
	// with app "", every workload of the project (those with no replica
	// left to list too). A missing workload is not an error.
	RemoveWorkload(ctx context.Context, project, app string, timeout *time.Duration) error
}

// WorkloadSpec is an app to run as a workload.
type WorkloadSpec struct {
	// Template is what every replica runs, resolved for replica 1 (its
	// name and labels are replica 1's; the backend numbers the others).
	Template ContainerSpec
	// NamePrefix + N is replica N's name (docker compose's
	// project-service-); empty for an app with a fixed container name.
	NamePrefix string
	Replicas   int
	// Complete: the app runs to completion once (others wait for it with
	// service_completed_successfully): a Job, not a Deployment.
	Complete bool
	// Force replaces the replicas even when nothing changed (up
	// --force-recreate).
	Force bool
	// Update is how a changed template rolls out (nil: one replica at a
	// time, stop-first).
	Update *spec.UpdateConfig
}

// WorkloadResult is what ApplyWorkload did.
type WorkloadResult struct {
	// Changed: the workload was created, or its replicas replaced.
	Changed bool
	// Replicas are the replicas of the template, as containers.
	Replicas []Container
}
