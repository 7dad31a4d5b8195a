package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// searchScript rewrites /etc/resolv.conf's search line in place (a bind
// mount cannot be renamed over), adding $1 and dropping $2 ($3 names
// another file, for tests).
const searchScript = `f=${3:-/etc/resolv.conf}; out=; found=
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
  search|search[[:space:]]*)
    found=1; new=search
    for d in ${line#search}; do [ "$d" = "$1" ] || [ "$d" = "$2" ] || new="$new $d"; done
    [ -z "$1" ] || new="$new $1"
    line=$new;;
  esac
  out="$out$line
"
done < $f
[ -n "$found" ] || [ -z "$1" ] || out="${out}search $1
"
printf '%s' "$out" > $f`

// resolveOn makes a running container's resolver search a network's
// domain (add) or stop searching it (drop). A pod's dnsConfig is fixed
// when it starts, so a network connected later resolves its members'
// names alone (as on a Docker network, whose resolver answers for it at
// once) only after this edit of the container's own resolv.conf. It needs
// a shell and a user who may write the file; without them the names
// resolve from the container's next start, which a warning says.
func (b *Backend) resolveOn(ctx context.Context, c container, add, drop string) {
	var out bytes.Buffer
	code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: []string{"sh", "-c", searchScript, "sh", add, drop}, Stdout: &out, Stderr: &out})
	if err == nil && code == 0 {
		return
	}
	if err == nil {
		err = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(out.String()))
	}
	fmt.Fprintf(os.Stderr, "WARN kubernetes backend: %s: its resolver's search list follows the networks from its next start (editing its /etc/resolv.conf failed: %v)\n", c.rec.Name, err)
}
