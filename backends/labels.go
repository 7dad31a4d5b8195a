package backends

// Labels cornus puts on everything it creates, so ps/down find it all again
// (even after a crash) without local state.
const (
	LabelProject    = "cornus.project"
	LabelApp        = "cornus.app"
	LabelReplica    = "cornus.replica"
	LabelConfigHash = "cornus.config-hash"
	LabelNetwork    = "cornus.network"    // network key in the project
	LabelVolume     = "cornus.volume"     // volume key in the project
	LabelDependsOn  = "cornus.depends-on" // comma-separated app names, for teardown order
	LabelStopGrace  = "cornus.stop-grace" // seconds, for backends without a native grace period
	LabelOneoff     = "cornus.oneoff"     // "true" for `run` containers
)

// Docker Compose's labels, set too so docker compose and tools that read
// them (IDEs, the devcontainer CLI) recognise cornus's containers.
const (
	ComposeProject    = "com.docker.compose.project"
	ComposeService    = "com.docker.compose.service"
	ComposeNumber     = "com.docker.compose.container-number"
	ComposeOneoff     = "com.docker.compose.oneoff"
	ComposeConfigHash = "com.docker.compose.config-hash"
	ComposeNetwork    = "com.docker.compose.network"
	ComposeVolume     = "com.docker.compose.volume"
	ComposeDependsOn  = "com.docker.compose.depends_on"
	ComposeVersion    = "com.docker.compose.version"
	// ComposeConfigFiles and ComposeWorkingDir are the Compose files a
	// project was loaded from (comma-separated) and its directory, on the
	// machine that loaded them.
	ComposeConfigFiles = "com.docker.compose.project.config_files"
	ComposeWorkingDir  = "com.docker.compose.project.working_dir"
)

// LabelWorkload marks a container that is a replica of a workload (a
// Kubernetes Deployment or Job, see Workloads): its value is the
// workload's kind and name. The runtime keeps its replicas, so the
// engine applies and removes the app as a whole.
const LabelWorkload = "cornus.workload"
