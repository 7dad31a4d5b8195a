// Package kubernetes is the backend that runs cornus apps on a Kubernetes
// cluster through its API (client-go's rest, clientcmd, remotecommand and
// portforward packages; core, discovery and networking API types), in one
// namespace.
//
// cornus's own front ends run an app as a workload (backends.Workloads,
// workload.go): a Deployment (its replicas, a rolling update when the
// template changes), or a Job for an app others wait on with
// service_completed_successfully. The pod template carries the replicas'
// record, so each pod is still a container to List, Inspect, Exec, Logs
// and the rest, numbered by a label cornus sets and named project-app-N;
// one replica stops alone (the Deployment keeps one fewer) and what a
// controller does not let one replica do (rename, connect) is refused
// with what to do instead.
//
// Everything else is Docker's contract, one container at a time: apps
// with a per-replica companion, lifecycle hooks, restart no or on-failure,
// or an ephemeral host port shared by replicas; everything the Docker API
// proxy creates; every app with CORNUS_K8S_WORKLOADS=pods. Such a
// container is a record and a pod: Create writes the record (a ConfigMap
// holding the pod to run, the container's labels and, while it has no
// pod, its last exit) and a files Secret for its secrets and configs;
// Start creates the pod, owned by the record, and waits until the
// container started; Stop ends the pod with the container's stop signal
// and grace period and keeps the exit in the record; Remove deletes the
// record (the pod and Secret go with it). Its replicas are pods of their
// own (the engine numbers them).
//
// `cornus compose convert --format k8s` renders the workloads as
// manifests for kubectl.
//
// Entry points: New (WithEnviron, WithRESTConfig) and the *Backend
// methods; Render (convert.go) for manifests. The API clients (client.go)
// are REST clients over a scheme of the three groups used, not client-go's
// typed clients, whose scheme registers every API group (~12 MB). Configuration: the pod's
// service account, else KUBECONFIG, else ~/.kube/config;
// CORNUS_K8S_NAMESPACE (cornus), CORNUS_K8S_PUBLISH (hostport, nodeport,
// loadbalancer), CORNUS_K8S_STORAGE_CLASS, CORNUS_K8S_VOLUME_SIZE (1Gi),
// CORNUS_K8S_CLUSTER_DOMAIN (cluster.local), CORNUS_K8S_LIVENESS (1: the
// healthcheck is a liveness probe too), CORNUS_K8S_NETWORK_POLICY
// (enforced, unenforced), CORNUS_K8S_START_TIMEOUT (2m),
// CORNUS_K8S_WORKLOADS (controllers, the default; pods). The verbs it uses
// are those of the chart's templates/rbac.yaml (`cornus k8s rbac`).
//
// # Mapping
//
// Networks are headless Services without selectors plus a NetworkPolicy
// admitting members only; names resolve through the cluster DNS from
// EndpointSlices cornus keeps per member pod (hostnames: service name,
// aliases, container name) and per-network search domains. Named volumes
// are PersistentVolumeClaims (a bind or NFS volume a host path or NFS
// volume). Published ports are host ports on the node (hostIP honored,
// TCP, UDP and SCTP), or an app Service with CORNUS_K8S_PUBLISH. The
// healthcheck is a readiness probe; Docker's health states are read back
// from readiness and the kubelet's probe events (health.go). A stop signal
// other than SIGTERM is sent inside the container (kill) before the pod's
// deletion, and by a preStop hook when anyone else deletes the pod. init
// shares the pod's PID namespace (the sandbox reaps). Users and groups by
// name are looked up in the image's /etc/passwd and /etc/group by a
// one-off pod. Images are the nodes': InspectImage reads the nodes' status
// where the account may, else asks a node with a probe pod; PullImage has
// a node pull; LoadImage explains what to do instead.
//
// # Capability matrix
//
// Features: images (inspect, list), pull, networks, connect (a running
// container's resolv.conf gains the network's search domain at once, where
// its image has a shell: resolver.go), kill,
// restart (stop, then a new pod), attach (before start too: the pod's log
// from its first line, stdin through attach), copy, top, rename, events,
// workloads, dial (pods/portforward) and remote mode (CORNUS_K8S_REMOTE=1:
// each replica's caretaker a native sidecar in its pod).
// Not: pause (Kubernetes cannot freeze a pod), stats (metrics need a
// metrics server). Healthchecks and restart policies are native (the
// kubelet). Gaps (Capabilities().Gaps says why): domainname, ulimits,
// pids limits and reservations, networkMode none (container: and
// service: modes are refused; host is hostNetwork), dns servers (asked
// only after the cluster DNS), utsMode, cgroupnsMode, devices,
// deviceCgroupRules,
// healthcheck.startInterval, restart.maxRetries, the owner of secrets and
// configs, tmpfs.mode, static addresses, logging, privileged hooks (an
// exec has the container's privileges); securityOpt.systempaths unless
// CORNUS_K8S_USER_NAMESPACES=1, and update with CORNUS_K8S_WORKLOADS=pods
// (Deployments roll updates out). Logs keep
// stdout and stderr apart only where the cluster splits log streams
// (PodLogsQuerySplitStreams).
//
// Companions (Capabilities().Sidecars): a replica's caretaker comes with
// its ContainerSpec (Sidecar) and runs as a native sidecar of its pod
// (sidecar.go): an init container with restartPolicy Always whose startup
// probe gates the app container, sharing emptyDirs with it (Bidirectional
// in the sidecar, which must then be privileged; HostToContainer in the
// app). Its environment lives in the container's Secret.
//
// Errors: API errors are translated to errdefs classes where the API is
// called (errors.go): NotFound, AlreadyExists → Conflict, Conflict →
// FailedPrecondition, Forbidden → PermissionDenied, Invalid →
// InvalidArgument, timeouts → Unavailable. It imports backends and spec
// only of cornus's packages.
package kubernetes
