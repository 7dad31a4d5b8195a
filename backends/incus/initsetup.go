package incus

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// prepare sets the container up as procConfig says, as the container's
// root before the main process starts: mounts (cgroups, tmpfs, /dev/shm,
// the record directory's files, volume subpaths), the domain name, the
// working directory, then the read-only root. It runs on every start of
// the container; mounts of an earlier start are gone with its mount
// namespace.
func prepare(p procConfig) error {
	if p.Domainname != "" {
		if err := unix.Setdomainname([]byte(p.Domainname)); err != nil {
			return fmt.Errorf("domainname %q: %w", p.Domainname, err)
		}
	}
	if n := p.Nofile; n != nil {
		lim := unix.Rlimit{Cur: rlimitValue(n[0]), Max: rlimitValue(n[1])}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("ulimits.nofile: %w", err)
		}
	}
	if err := mountCgroups(p.Caps != nil); err != nil {
		return err
	}
	for _, t := range p.Tmpfs {
		opts := []string{}
		if t.Size > 0 {
			opts = append(opts, "size="+strconv.FormatInt(t.Size, 10))
		}
		if t.Mode != 0 {
			opts = append(opts, "mode="+strconv.FormatUint(uint64(t.Mode), 8))
		}
		if err := mountTmpfs(t.Target, strings.Join(opts, ",")); err != nil {
			return err
		}
	}
	shm := p.ShmSize
	if shm <= 0 {
		shm = 64 << 20
	}
	if err := mountTmpfs("/dev/shm", "mode=1777,size="+strconv.FormatInt(shm, 10)); err != nil {
		return err
	}
	for _, b := range p.Binds {
		if err := bind(b); err != nil {
			return err
		}
	}
	if p.WorkingDir != "" {
		// Docker makes a missing working directory.
		if err := os.MkdirAll(p.WorkingDir, 0o755); err != nil {
			return fmt.Errorf("working directory %s: %w", p.WorkingDir, err)
		}
	}
	if p.ReadOnly {
		if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("read-only root filesystem: %w", err)
		}
	}
	return nil
}

func mountTmpfs(target, opts string) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("tmpfs %s: %w", target, err)
	}
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("tmpfs %s (%s): %w", target, opts, err)
	}
	return nil
}

// bind bind-mounts b.Source on b.Target, making the target (a file or a
// directory, like the source) when missing.
func bind(b bindMount) error {
	if b.File {
		if err := os.MkdirAll(filepath.Dir(b.Target), 0o755); err != nil {
			return fmt.Errorf("mount %s: %w", b.Target, err)
		}
		f, err := os.OpenFile(b.Target, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("mount %s: %w", b.Target, err)
		}
		if f != nil {
			f.Close()
		}
	} else if err := os.MkdirAll(b.Target, 0o755); err != nil {
		return fmt.Errorf("mount %s: %w", b.Target, err)
	}
	if err := unix.Mount(b.Source, b.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mount %s on %s: %w", b.Source, b.Target, err)
	}
	if b.ReadOnly {
		if err := unix.Mount("", b.Target, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("mount %s read-only: %w", b.Target, err)
		}
	}
	return nil
}

// identity resolves the process user the way Docker does: user[:group]
// from the container's /etc/passwd and /etc/group, supplementary groups
// from /etc/group for a named user, plus groupAdd.
func identity(p procConfig) (*syscall.Credential, string, error) {
	root, err := rootfs.Open("/")
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	spec := p.User
	if spec == "" {
		spec = "0"
	}
	u, err := root.LookupUser(spec)
	if err != nil {
		return nil, "", fmt.Errorf("user: %w", err)
	}
	cred := &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
	name, _, _ := strings.Cut(spec, ":")
	cred.Groups = append(cred.Groups, memberOf(name, u.UID)...)
	for _, g := range p.GroupAdd {
		gid, err := groupID(g)
		if err != nil {
			return nil, "", fmt.Errorf("groupAdd %q: %w", g, err)
		}
		cred.Groups = append(cred.Groups, gid)
	}
	home := u.Home
	if home == "" {
		home = "/"
	}
	return cred, home, nil
}

// memberOf lists the groups /etc/group names the user in.
func memberOf(name string, uid uint32) []uint32 {
	data, err := readSmall("/etc/group")
	if err != nil {
		return nil
	}
	if _, err := strconv.Atoi(name); err == nil {
		name = userName(uid)
	}
	if name == "" {
		return nil
	}
	var out []uint32
	for _, line := range strings.Split(data, "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		for _, m := range strings.Split(f[3], ",") {
			if m == name {
				if gid, err := strconv.ParseUint(f[2], 10, 32); err == nil {
					out = append(out, uint32(gid))
				}
			}
		}
	}
	return out
}

func userName(uid uint32) string {
	data, err := readSmall("/etc/passwd")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(data, "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 3 && f[2] == strconv.FormatUint(uint64(uid), 10) {
			return f[0]
		}
	}
	return ""
}

func groupID(g string) (uint32, error) {
	if id, err := strconv.ParseUint(g, 10, 32); err == nil {
		return uint32(id), nil
	}
	data, err := readSmall("/etc/group")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(data, "\n") {
		if f := strings.Split(line, ":"); len(f) >= 3 && f[0] == g {
			id, err := strconv.ParseUint(f[2], 10, 32)
			return uint32(id), err
		}
	}
	return 0, fmt.Errorf("no such group in the container's /etc/group")
}

// readSmall reads a system database file, at most 4 MiB of it.
func readSmall(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4<<20))
	return string(data), err
}

// confine limits every process started from now on (the main process,
// probes, and for the exec helper the command it becomes): the capability
// bounding set to caps (nil: unchanged) and no-new-privileges.
func confine(caps []string, noNewPrivs bool) error {
	if caps != nil {
		keep := map[int]bool{}
		for _, c := range caps {
			keep[capNumbers[c]] = true
		}
		last := lastCap()
		for c := 0; c <= last; c++ {
			if keep[c] {
				continue
			}
			// Not in the set already (a container whose init lacks it):
			// dropping it again needs CAP_SETPCAP, which may be gone too.
			if in, _, e := syscall.Syscall(syscall.SYS_PRCTL, unix.PR_CAPBSET_READ, uintptr(c), 0); e == 0 && in == 0 {
				continue
			}
			if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); e != 0 && e != syscall.EINVAL {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, e)
			}
		}
		// Ambient and inheritable capabilities would carry dropped ones
		// across exec.
		if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); e != 0 && e != syscall.EINVAL {
			return fmt.Errorf("clear ambient capabilities: %w", e)
		}
	}
	if noNewPrivs {
		if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
			return fmt.Errorf("no-new-privileges: %w", e)
		}
	}
	return nil
}

func lastCap() int {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 40
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 40
	}
	return n
}

// rlimitValue is a ulimit value for setrlimit (negative: unlimited).
func rlimitValue(v int64) uint64 {
	if v < 0 {
		return unix.RLIM_INFINITY
	}
	return uint64(v)
}
