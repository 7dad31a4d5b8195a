package kubernetes

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cornus-dev/cornus/backends"
)

// renderStorage mounts the container's storage: named volumes as their
// PersistentVolumeClaims (or host paths, for volumes whose driver options
// bind a host directory), anonymous volumes as emptyDirs living as long as
// the pod, binds as hostPath volumes, tmpfs and /dev/shm as memory-backed
// emptyDirs, and secrets and configs from the container's files Secret,
// one file per mount.
func renderStorage(in renderInput, pod *corev1.PodSpec, c *corev1.Container, files map[string][]byte) error {
	ps := podStorage{pod: pod, c: c, have: map[string]bool{}}
	if err := ps.volumes(in); err != nil {
		return err
	}
	if err := ps.binds(in.cs.Binds); err != nil {
		return err
	}
	ps.memory(in.cs)
	return ps.files(in, files)
}

// podStorage adds volumes to a pod, each once, and their mounts to its
// container.
type podStorage struct {
	pod  *corev1.PodSpec
	c    *corev1.Container
	have map[string]bool
}

func (ps podStorage) add(v corev1.Volume, m corev1.VolumeMount) {
	ps.addVolume(v)
	ps.c.VolumeMounts = append(ps.c.VolumeMounts, m)
}

func (ps podStorage) addVolume(v corev1.Volume) {
	if !ps.have[v.Name] {
		ps.have[v.Name] = true
		ps.pod.Volumes = append(ps.pod.Volumes, v)
	}
}

// volumes mounts anonymous volumes, driver-option volumes and claims.
func (ps podStorage) volumes(in renderInput) error {
	for i, v := range in.cs.Volumes {
		name := fmt.Sprintf("vol-%d", i)
		m := corev1.VolumeMount{Name: name, MountPath: v.Target, ReadOnly: v.ReadOnly, SubPath: v.Subpath}
		switch src, ok := in.volumes[v.Name]; {
		case v.Name == "":
			vs, err := anonymousVolume(v)
			if err != nil {
				return err
			}
			ps.add(corev1.Volume{Name: name, VolumeSource: vs}, m)
		case !ok:
			return invalidf("volumes[%d]: volume %q was not prepared (EnsureVolume)", i, v.Name)
		case src.direct != nil:
			ps.add(corev1.Volume{Name: name, VolumeSource: *src.direct}, m)
		default:
			// One pod volume per claim, however often it is mounted.
			m.Name = "pvc-" + shortHash(src.claim)
			ps.add(corev1.Volume{Name: m.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: src.claim},
			}}, m)
		}
	}
	return nil
}

// binds mounts host paths.
func (ps podStorage) binds(binds []backends.Bind) error {
	for i, b := range binds {
		name := fmt.Sprintf("bind-%d", i)
		// No hostPath type, even with CreateHostPath: DirectoryOrCreate
		// fails on an existing file (a Compose bind of one file), while
		// the runtime (containerd's and CRI-O's CRI) binds what exists as
		// it is and makes a missing source a directory, as Docker does.
		hp := &corev1.HostPathVolumeSource{Path: b.Source}
		m := corev1.VolumeMount{Name: name, MountPath: b.Target, ReadOnly: b.ReadOnly}
		switch strings.TrimPrefix(b.Propagation, "r") {
		case "", "private":
		case "slave":
			m.MountPropagation = ptr(corev1.MountPropagationHostToContainer)
		case "shared":
			m.MountPropagation = ptr(corev1.MountPropagationBidirectional)
		default:
			return invalidf("mounts[%d].propagation %q", i, b.Propagation)
		}
		ps.add(corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: hp}}, m)
	}
	return nil
}

// memory mounts tmpfs and /dev/shm as memory-backed emptyDirs.
func (ps podStorage) memory(cs backends.ContainerSpec) {
	for i, t := range cs.Tmpfs {
		name := fmt.Sprintf("tmpfs-%d", i)
		ed := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
		if t.Size > 0 {
			ed.SizeLimit = resource.NewQuantity(t.Size, resource.BinarySI)
		}
		ps.add(corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: ed}}, corev1.VolumeMount{Name: name, MountPath: t.Target})
	}
	if cs.ShmSize > 0 {
		ps.add(corev1.Volume{Name: shmVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: resource.NewQuantity(cs.ShmSize, resource.BinarySI),
		}}}, corev1.VolumeMount{Name: shmVolume, MountPath: "/dev/shm"})
	}
}

// files mounts secrets and configs from the container's files Secret, one
// file per mount (the Secret's content goes into files).
func (ps podStorage) files(in renderInput, files map[string][]byte) error {
	if len(in.cs.Files) == 0 {
		return nil
	}
	sv := &corev1.SecretVolumeSource{SecretName: in.name, DefaultMode: ptr(int32(0o444))}
	var mounts []corev1.VolumeMount
	for i, f := range in.cs.Files {
		key := fmt.Sprintf("f%d", i)
		files[key] = f.Content
		mode := int32(f.Mode & 0o777)
		if f.Mode == 0 {
			mode = 0o444
		}
		sv.Items = append(sv.Items, corev1.KeyToPath{Key: key, Path: key, Mode: ptr(mode)})
		target := f.Target
		if !path.IsAbs(target) {
			return invalidf("secret or config target %q is not an absolute path", target)
		}
		// subPath mounts the file itself (not the Secret volume's
		// symlink), with its own mode.
		mounts = append(mounts, corev1.VolumeMount{Name: filesVolume, MountPath: target, SubPath: key, ReadOnly: true})
	}
	ps.c.VolumeMounts = append(ps.c.VolumeMounts, mounts...)
	ps.addVolume(corev1.Volume{Name: filesVolume, VolumeSource: corev1.VolumeSource{Secret: sv}})
	return nil
}

// anonymousVolume is an anonymous volume's source: an emptyDir, or what
// its driver options describe (a host directory bind, an NFS export).
func anonymousVolume(v backends.VolumeMount) (corev1.VolumeSource, error) {
	if len(v.DriverOpts) == 0 && (v.Driver == "" || v.Driver == "local") {
		return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}, nil
	}
	return driverVolume(v.Driver, v.DriverOpts)
}

// driverVolume maps the local driver's options onto a pod volume: a bind
// of a host directory (type none, o bind) becomes a hostPath, an NFS
// mount (type nfs, o addr=HOST, device :/PATH) an nfs volume.
func driverVolume(driver string, opts map[string]string) (corev1.VolumeSource, error) {
	if driver != "" && driver != "local" {
		return corev1.VolumeSource{}, notImplementedf("volume driver %q: Kubernetes provides storage through StorageClasses (set %s)", driver, EnvStorageClass)
	}
	typ, o, dev := opts["type"], opts["o"], opts["device"]
	switch {
	case typ == "none" && hasOption(o, "bind"):
		return corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dev}}, nil
	case typ == "nfs" || typ == "nfs4":
		server := ""
		for _, kv := range strings.Split(o, ",") {
			if v, ok := strings.CutPrefix(kv, "addr="); ok {
				server = v
			}
		}
		if server == "" || !strings.HasPrefix(dev, ":") {
			return corev1.VolumeSource{}, invalidf("nfs volume options %v: want o=addr=HOST and device=:/PATH", opts)
		}
		return corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: server, Path: strings.TrimPrefix(dev, ":"), ReadOnly: hasOption(o, "ro")}}, nil
	}
	return corev1.VolumeSource{}, notImplementedf("volume driver options %v: only binds of a host directory and NFS mounts have a Kubernetes form", opts)
}

func hasOption(list, opt string) bool {
	for _, o := range strings.Split(list, ",") {
		if o == opt {
			return true
		}
	}
	return false
}
