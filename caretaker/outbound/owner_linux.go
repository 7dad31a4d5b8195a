package outbound

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Owner names the cgroup (v2) the caretaker's sockets are made in, the
// second half of what the redirect skips: a mark alone can be forged by
// any process of the namespace that may set SO_MARK, a socket's cgroup
// only by one that may write the cgroup file system (which a container
// may not). The kernel records it on each socket at its creation.
type Owner struct {
	// Cgroup is the cgroup's id (its inode on the cgroup2 file system).
	Cgroup uint64
	// Level is its depth below the root of this process's cgroup
	// namespace, where nftables' `socket cgroupv2 level` counts from
	// (Linux 6.11 and later; before, from the hierarchy's root, which is
	// the same unless the container has a cgroup namespace of its own).
	Level uint32
}

func (o Owner) String() string { return fmt.Sprintf("cgroup %d at level %d", o.Cgroup, o.Level) }

// SelfOwner is the Owner of the calling process's sockets: the level from
// /proc/self/cgroup, the id from a socket of its own read back through
// sock_diag (INET_DIAG_CGROUP_ID, Linux 5.7). Neither needs a privilege
// or the cgroup file system mounted.
func SelfOwner() (Owner, error) {
	level, err := cgroupLevel("/proc/self/cgroup")
	if err != nil {
		return Owner{}, err
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return Owner{}, fmt.Errorf("socket cgroup: %w", err)
	}
	defer ln.Close()
	id, err := socketCgroup(ln)
	if err != nil {
		return Owner{}, err
	}
	return Owner{Cgroup: id, Level: level}, nil
}

// cgroupLevel is the depth of the unified (v2) hierarchy's entry ("0::")
// of a /proc/<pid>/cgroup file: "/" is 0, "/a/b" is 2.
func cgroupLevel(file string) (uint32, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, fmt.Errorf("socket cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p, ok := strings.CutPrefix(sc.Text(), "0::")
		if !ok {
			continue
		}
		var n uint32
		for _, e := range strings.Split(p, "/") {
			if e != "" {
				n++
			}
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("socket cgroup: %s: %w", file, err)
	}
	return 0, fmt.Errorf("socket cgroup: %s has no cgroup v2 entry (0::)", file)
}

// Netlink sock_diag's wire (linux/inet_diag.h), which x/sys/unix does not
// describe.
const (
	sizeofInetDiagReqV2 = 56 // family, protocol, ext, pad, states, inet_diag_sockid
	sizeofInetDiagMsg   = 72 // ..., uid at 64, inode at 68
	inetDiagCgroupID    = 21 // INET_DIAG_CGROUP_ID
	tcpListen           = 10 // TCP_LISTEN
)

// socketCgroup reads the cgroup id of ln's socket: a dump of this
// namespace's listening TCP sockets, matched by inode.
func socketCgroup(ln *net.TCPListener) (uint64, error) {
	rc, err := ln.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("socket cgroup: %w", err)
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil || serr != nil {
		return 0, fmt.Errorf("socket cgroup: fstat: %w", errors.Join(err, serr))
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("socket cgroup: sock_diag: %w", err)
	}
	defer unix.Close(fd)
	req := make([]byte, unix.SizeofNlMsghdr+sizeofInetDiagReqV2)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1) // sequence
	body := req[unix.SizeofNlMsghdr:]
	body[0], body[1] = unix.AF_INET, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(body[4:], 1<<tcpListen)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("socket cgroup: sock_diag: %w", err)
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return 0, fmt.Errorf("socket cgroup: sock_diag: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, fmt.Errorf("socket cgroup: sock_diag: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return 0, fmt.Errorf("socket cgroup: sock_diag does not list the probe socket (inode %d)", st.Ino)
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
						return 0, fmt.Errorf("socket cgroup: sock_diag: %w", unix.Errno(-e))
					}
				}
				return 0, errors.New("socket cgroup: sock_diag: malformed error")
			case unix.SOCK_DIAG_BY_FAMILY:
				if id, ok := diagCgroup(m.Data, uint32(st.Ino)); ok {
					return id, nil
				}
			}
		}
	}
}

// diagCgroup reads INET_DIAG_CGROUP_ID from an inet_diag_msg for the
// socket of inode ino.
func diagCgroup(msg []byte, ino uint32) (uint64, bool) {
	if len(msg) < sizeofInetDiagMsg || binary.NativeEndian.Uint32(msg[68:]) != ino {
		return 0, false
	}
	for a := msg[sizeofInetDiagMsg:]; len(a) >= unix.SizeofRtAttr; {
		l, typ := int(binary.NativeEndian.Uint16(a)), binary.NativeEndian.Uint16(a[2:])
		if l < unix.SizeofRtAttr || l > len(a) {
			return 0, false
		}
		if typ == inetDiagCgroupID && l >= unix.SizeofRtAttr+8 {
			return binary.NativeEndian.Uint64(a[unix.SizeofRtAttr:]), true
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return 0, false
}
