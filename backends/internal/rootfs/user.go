package rootfs

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
)

// maxDBBytes bounds what is read of /etc/passwd or /etc/group.
const maxDBBytes = 4 << 20

// User is a resolved user.
type User struct {
	UID, GID uint32
	Home     string
}

// LookupUser resolves "user[:group]" (names or numbers) the way the
// container's own /etc/passwd and /etc/group say, as docker exec -u does.
// A numeric user missing from passwd is used as is, with gid 0.
func (r *Root) LookupUser(spec string) (User, error) {
	name, group, hasGroup := strings.Cut(spec, ":")
	var u User
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		u.UID = uint32(id)
		if e, ok := r.findEntry("/etc/passwd", func(f []string) bool { return f[2] == name }); ok {
			u.GID, u.Home = parseID(e[3]), e[5]
		}
	} else {
		e, ok := r.findEntry("/etc/passwd", func(f []string) bool { return f[0] == name })
		if !ok || len(e) < 6 {
			return User{}, fmt.Errorf("user %q: no such user in the container's /etc/passwd: %w", name, errdefs.ErrNotFound)
		}
		u.UID, u.GID, u.Home = parseID(e[2]), parseID(e[3]), e[5]
	}
	if !hasGroup {
		return u, nil
	}
	if id, err := strconv.ParseUint(group, 10, 32); err == nil {
		u.GID = uint32(id)
		return u, nil
	}
	e, ok := r.findEntry("/etc/group", func(f []string) bool { return f[0] == group })
	if !ok || len(e) < 3 {
		return User{}, fmt.Errorf("group %q: no such group in the container's /etc/group: %w", group, errdefs.ErrNotFound)
	}
	u.GID = parseID(e[2])
	return u, nil
}

func parseID(s string) uint32 {
	n, _ := strconv.ParseUint(s, 10, 32)
	return uint32(n)
}

// findEntry returns the first colon-separated line of a database file
// with at least 7 (passwd) or 3 (group) fields that match accepts.
func (r *Root) findEntry(path string, match func([]string) bool) ([]string, bool) {
	f, err := r.open(path, unix.O_RDONLY)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxDBBytes))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ":")
		if len(fields) < 3 {
			continue
		}
		for len(fields) < 7 {
			fields = append(fields, "")
		}
		if match(fields) {
			return fields, true
		}
	}
	return nil, false
}
