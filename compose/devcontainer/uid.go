package devcontainer

import (
	"fmt"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/spec"
)

// uidStage gives user the client's UID and GID (updateRemoteUserUID), as
// the devcontainer CLI's derived image does on Linux, so files in bind
// mounts are theirs on both sides: the passwd entry is rewritten, the
// group of the old GID moved along, and the home directory given over. It
// leaves the user alone when another user has the UID, keeps the old GID
// when another group has the new one, and says so in the build's output.
func uidStage(user string, uid, gid int) spec.BuildStage {
	script := fmt.Sprintf(`u=%s; uid=%d; gid=%d; `+
		`line=$(awk -F: -v u="$u" '$1==u' /etc/passwd); `+
		`if [ -z "$line" ]; then echo "updateRemoteUserUID: $u is not in /etc/passwd; left as it is"; exit 0; fi; `+
		`old_uid=$(echo "$line" | cut -d: -f3); old_gid=$(echo "$line" | cut -d: -f4); home=$(echo "$line" | cut -d: -f6); `+
		`if [ "$old_uid" = "$uid" ] && [ "$old_gid" = "$gid" ]; then exit 0; fi; `+
		`other=$(awk -F: -v u="$u" -v id="$uid" '$3==id && $1!=u {print $1}' /etc/passwd); `+
		`if [ -n "$other" ] && [ "$old_uid" != "$uid" ]; then echo "updateRemoteUserUID: UID $uid belongs to $other; $u left as it is"; exit 0; fi; `+
		`grp=$(awk -F: -v id="$gid" '$3==id {print $1}' /etc/group); `+
		`if [ -n "$grp" ] && [ "$old_gid" != "$gid" ]; then echo "updateRemoteUserUID: GID $gid belongs to group $grp; $u keeps GID $old_gid"; gid=$old_gid; fi; `+
		`awk -F: -v OFS=: -v u="$u" -v uid="$uid" -v gid="$gid" '$1==u {$3=uid; $4=gid} {print}' /etc/passwd > /tmp/passwd.new && cat /tmp/passwd.new > /etc/passwd; `+
		`if [ "$old_gid" != "$gid" ]; then awk -F: -v OFS=: -v old="$old_gid" -v gid="$gid" '$3==old {$3=gid} {print}' /etc/group > /tmp/group.new && cat /tmp/group.new > /etc/group; fi; `+
		`rm -f /tmp/passwd.new /tmp/group.new; `+
		`if [ -d "$home" ]; then chown -R "$uid:$gid" "$home"; fi; `+
		`echo "updateRemoteUserUID: $u is now $uid:$gid (was $old_uid:$old_gid)"`, shellQuote(user), uid, gid)
	return spec.BuildStage{Name: "updateRemoteUserUID", Instructions: "USER root\nRUN " + script + "\n"}
}

// buildStages are what the devcontainer adds on top of its image: its
// local features in install order, then the remote user's UID update
// when the client's user is not root (updateRemoteUserUID: default on).
// The user is remoteUser, else containerUser; an image's own user is not
// known here, and then nothing is updated.
func (dc config) buildStages(dir string, local *compose.LocalUser) ([]spec.BuildStage, error) {
	fs, err := features(dc.Features, dir)
	if err != nil {
		return nil, err
	}
	user := dc.RemoteUser
	if user == "" {
		user = dc.ContainerUser
	}
	var out []spec.BuildStage
	for i, f := range installOrder(fs, dc.OverrideFeatureInstallOrder) {
		st, err := f.stage(i, cmpOr(user, "root"), cmpOr(dc.ContainerUser, "root"))
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	update := dc.UpdateRemoteUserUID == nil || *dc.UpdateRemoteUserUID
	if update && local != nil && local.UID != 0 && user != "" && user != "root" && user != "0" {
		out = append(out, uidStage(user, local.UID, local.GID))
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
