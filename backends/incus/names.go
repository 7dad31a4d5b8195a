package incus

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Identity and metadata keys cornus sets in an instance's config (Incus
// keeps user.* keys as they are). Labels are stored whole, as JSON.
const (
	keyManaged    = "user.cornus.managed"
	keyID         = "user.cornus.id"   // the container ID: 64 random hex digits, new with each creation
	keyName       = "user.cornus.name" // the container name (Docker rules, may hold _ and .)
	keyProject    = "user.cornus.project"
	keyApp        = "user.cornus.app"
	keyReplica    = "user.cornus.replica"
	keyLabels     = "user.cornus.labels"
	keyImage      = "user.cornus.origin.image" // the reference the spec named
	keyImageID    = "user.cornus.origin.image-id"
	keyDir        = "user.cornus.dir"         // the record directory on the host
	keyCommand    = "user.cornus.command"     // the main process's argv, JSON, for display
	keyNetworks   = "user.cornus.networks"    // network attachments, JSON (runtime name, IP, aliases)
	keyAnonymous  = "user.cornus.anonymous"   // anonymous volumes made for the instance, comma-separated
	keyPorts      = "user.cornus.ports"       // published ports, JSON
	keyExtraHosts = "user.cornus.extra-hosts" // extra /etc/hosts entries, JSON
)

// instanceName is the Incus name for a container: "cornus-" and the
// container name where that is a valid Incus name (letters, digits,
// hyphens, at most 63), else its valid characters and a hash of it, so
// distinct names never meet.
func instanceName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	clean := "cornus-" + strings.Trim(b.String(), "-")
	if "cornus-"+name == clean && len(clean) <= 63 {
		return clean
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	if len(clean) > 63-len(suffix) {
		clean = strings.TrimRight(clean[:63-len(suffix)], "-")
	}
	return clean + suffix
}

// bridgeName is the Incus name of a project network (an interface name:
// at most 15 characters), derived from the Incus project and the
// network's runtime name, so every cornus process picks the same one.
func bridgeName(project, runtime string) string {
	sum := sha256.Sum256([]byte(project + "/" + runtime))
	return bridgePrefix + hex.EncodeToString(sum[:])[:11]
}

// volumeName is the Incus name of a volume: the runtime name where valid
// (Incus refuses "/" and names starting with "."), else a hash.
func volumeName(runtime string) string {
	if runtime != "" && !strings.ContainsAny(runtime, "/\\ ") && !strings.HasPrefix(runtime, ".") && len(runtime) <= 200 {
		return runtime
	}
	sum := sha256.Sum256([]byte(runtime))
	return "cornus-" + hex.EncodeToString(sum[:])[:16]
}

// bridgePrefix starts the name of every bridge cornus makes in Incus (the
// firewall rules match it).
const bridgePrefix = "cinc"
