package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cornus-dev/cornus/backends"
)

// record is what cornus keeps about one container, in a ConfigMap of the
// same name as its pod: what it was created from (the pod to run) and its
// last state while it has no pod (stopped). A container is its record; its
// pod exists from Start to Stop. Deleting the record cascades to the pod
// and the files Secret (owner references).
type record struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	Project string            `json:"project,omitempty"`
	App     string            `json:"app,omitempty"`
	Replica int               `json:"replica,omitempty"`
	Image   string            `json:"image"`
	Labels  map[string]string `json:"labels,omitempty"`
	Created time.Time         `json:"created"`

	Config   backends.ContainerConfig `json:"config"`
	Ports    []backends.PortBinding   `json:"ports,omitempty"`
	Networks []netRef                 `json:"networks,omitempty"`
	Mounts   []backends.MountPoint    `json:"mounts,omitempty"`
	// Pod is the pod spec Start creates; PodLabels its labels beyond the
	// identity ones (network membership).
	Pod       corev1.PodSpec    `json:"pod"`
	PodLabels map[string]string `json:"podLabels,omitempty"`
	// HealthRetries and HealthStart read the readiness probe back as
	// Docker's health states (health.go).
	HealthRetries int           `json:"healthRetries,omitempty"`
	HealthStart   time.Duration `json:"healthStart,omitempty"`

	State lastState `json:"state"`

	// Workload, for a replica of a workload (workload.go): its kind and
	// name; NamePrefix + the replica's number is its name ("" for a fixed
	// container name).
	Workload   string `json:"workload,omitempty"`
	NamePrefix string `json:"namePrefix,omitempty"`
}

// netRef is one network the container is on.
type netRef struct {
	Network string   `json:"network"` // runtime name
	Object  string   `json:"object"`  // its Service's name
	Aliases []string `json:"aliases,omitempty"`
}

// lastState is a container's state when it has no pod, and what the
// previous pods left (restarts, exit codes).
type lastState struct {
	Started      bool      `json:"started,omitempty"`
	StartedAt    time.Time `json:"startedAt,omitzero"`
	FinishedAt   time.Time `json:"finishedAt,omitzero"`
	ExitCode     int       `json:"exitCode,omitempty"`
	OOMKilled    bool      `json:"oomKilled,omitempty"`
	RestartCount int       `json:"restartCount,omitempty"`
	Error        string    `json:"error,omitempty"`
}

// Keys of the record ConfigMap's data.
const (
	keyContainer = "container.json"
	keyState     = "state.json"
)

func newRecord(in renderInput, ports []backends.PortBinding) record {
	cs := in.cs
	r := record{
		ID: in.id, Name: cs.Name, Project: cs.Project, App: cs.App, Replica: cs.Replica, Image: cs.Image,
		Labels: maps.Clone(cs.Labels), Created: time.Now().UTC(), Ports: ports,
		Config: backends.ContainerConfig{
			Hostname: cs.Hostname, Domainname: cs.Domainname, User: cs.User, Env: cs.Env, Cmd: cs.Command,
			Entrypoint: cs.Entrypoint, WorkingDir: cs.WorkingDir, TTY: cs.TTY, OpenStdin: cs.StdinOpen,
			StopSignal: cs.StopSignal.String(), RestartPolicy: cs.Restart, Privileged: cs.Privileged, Init: cs.Init,
		},
	}
	if cs.StopTimeout != nil {
		s := int(cs.StopTimeout.Seconds())
		r.Config.StopTimeout = &s
	}
	if h := cs.Healthcheck; h != nil && !h.Disabled && len(h.Test) > 0 {
		r.Config.Healthcheck = specHealthcheck(h)
		r.HealthRetries, r.HealthStart = h.Retries, h.StartPeriod
		if r.HealthRetries <= 0 {
			r.HealthRetries = 3
		}
	}
	for _, n := range cs.Networks {
		r.Networks = append(r.Networks, netRef{Network: n.Network, Object: netObjectName(n.Network), Aliases: n.Aliases})
	}
	for _, v := range cs.Volumes {
		typ := "volume"
		if v.Name == "" {
			typ = "volume" // anonymous: an emptyDir of the pod
		}
		r.Mounts = append(r.Mounts, backends.MountPoint{Type: typ, Name: v.Name, Destination: v.Target, ReadOnly: v.ReadOnly})
	}
	for _, b := range cs.Binds {
		r.Mounts = append(r.Mounts, backends.MountPoint{Type: "bind", Source: b.Source, Destination: b.Target, ReadOnly: b.ReadOnly})
	}
	for _, t := range cs.Tmpfs {
		r.Mounts = append(r.Mounts, backends.MountPoint{Type: "tmpfs", Destination: t.Target})
	}
	return r
}

// command is the container's command line for display.
func (r record) command() string {
	var parts []string
	if r.Pod.Containers != nil {
		c := r.Pod.Containers[0]
		parts = append(append(parts, c.Command...), c.Args...)
	}
	return strings.Join(parts, " ")
}

// configMap encodes the record as its ConfigMap.
func (r record) configMap(namespace, name string) (*corev1.ConfigMap, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode record of %s: %w", r.Name, err)
	}
	labels, err := json.Marshal(r.Labels)
	if err != nil {
		return nil, fmt.Errorf("encode labels of %s: %w", r.Name, err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels:      r.selectors(kindContainer),
			Annotations: map[string]string{annLabels: string(labels), annName: r.Name},
		},
		Data: map[string]string{keyContainer: string(body)},
	}, nil
}

// selectors are the identity labels every object of the container gets.
func (r record) selectors(kind string) map[string]string {
	l := map[string]string{
		labelManagedBy: managedBy,
		labelID:        idLabel(r.ID),
		labelName:      labelValue(r.Name),
		labelReplica:   strconv.Itoa(r.Replica),
	}
	if kind != "" {
		l[labelKind] = kind
	}
	if r.Project != "" {
		l[labelProject] = labelValue(r.Project)
	}
	if r.App != "" {
		l[labelApp] = labelValue(r.App)
	}
	return l
}

// decodeRecord reads a record ConfigMap.
func decodeRecord(cm *corev1.ConfigMap) (record, error) {
	var r record
	body, ok := cm.Data[keyContainer]
	if !ok {
		return r, fmt.Errorf("ConfigMap %s is not a cornus container record: %w", cm.Name, errdefs.ErrNotFound)
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return r, fmt.Errorf("ConfigMap %s: decode container record: %w", cm.Name, err)
	}
	if n := cm.Annotations[annName]; n != "" {
		r.Name = n // renamed
	}
	return r, nil
}

// fromPod keeps a finished pod's run in the record.
func fromPod(ls *lastState, st podState) {
	ls.Started = true
	if !st.startedAt.IsZero() {
		ls.StartedAt = st.startedAt
	}
	ls.FinishedAt, ls.ExitCode, ls.OOMKilled, ls.RestartCount, ls.Error = st.finishedAt, st.exitCode, st.oomKilled, st.restartCount, st.err
	if ls.FinishedAt.IsZero() {
		ls.FinishedAt = time.Now().UTC()
	}
}

// saveState updates the record's last state.
func (b *Backend) saveState(ctx context.Context, c container, update func(*lastState)) error {
	return b.updateRecord(ctx, c, func(r *record) { update(&r.State) })
}

// updateRecord changes a container's record (retrying on a concurrent
// update).
func (b *Backend) updateRecord(ctx context.Context, c container, update func(*record)) error {
	if c.cm == nil {
		return notForReplica(c, "change")
	}
	cms := b.core.ConfigMaps(b.cfg.namespace)
	cm := c.cm
	for try := 0; ; try++ {
		r, err := decodeRecord(cm)
		if err != nil {
			return err
		}
		update(&r)
		next, err := r.configMap(b.cfg.namespace, cm.Name)
		if err != nil {
			return err
		}
		upd := cm.DeepCopy()
		upd.Data = next.Data
		if _, err = cms.Update(ctx, upd, metav1.UpdateOptions{}); err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || try > 5 {
			return wrap(err, "update container %s", c.rec.Name)
		}
		if cm, err = cms.Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
			return wrap(err, "update container %s", c.rec.Name)
		}
	}
}
