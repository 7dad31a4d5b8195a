// Package localstore keeps the volumes and networks of a daemonless
// backend on this host: local-driver volumes as directories (with
// Docker's local driver options: bind, tmpfs, type+device) and networks
// as CNI bridges over backends/internal/cni with their labels beside.
//
// Entry points: NewVolumes and NewNetworks, whose methods are the
// backend verbs (EnsureVolume → Volumes.Ensure, ListNetworks →
// Networks.List, ...); MatchLabels and ValidName, the label filter and
// name rule the backends share; WriteJSON and ReadJSON for their state
// files. The backend's name is a parameter, for messages; which
// container uses a volume is asked of the backend (InUse).
//
// It imports backends, spec and backends/internal/cni; never a backend.
package localstore
