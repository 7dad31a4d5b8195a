package kubernetes

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations cornus sets on the Kubernetes objects it makes.
// Kubernetes label values are short and restricted, so the identity
// labels hold sanitized values for selection; every container label
// (cornus's, docker compose's, the app's own) is kept verbatim as JSON in
// the annotation annLabels.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "cornus"
	labelProject   = "cornus.dev/project"
	labelApp       = "cornus.dev/app"
	labelReplica   = "cornus.dev/replica"
	labelID        = "cornus.dev/id"   // the container ID's first 32 hex digits
	labelName      = "cornus.dev/name" // the container's (sanitized) name
	labelKind      = "cornus.dev/kind" // container, network, volume, probe
	labelNetwork   = "cornus.dev/network"
	labelVolume    = "cornus.dev/volume"
	// netLabelPrefix + a network's object name marks a pod's membership
	// (NetworkPolicies select on it).
	netLabelPrefix = "net.cornus.dev/"

	annLabels  = "cornus.dev/labels"
	annName    = "cornus.dev/name"
	annNetwork = "cornus.dev/network" // the network's runtime name
	annVolume  = "cornus.dev/volume"  // the volume's runtime name

	kindContainer = "container"
	kindNetwork   = "network"
	kindVolume    = "volume"
	kindProbe     = "image-probe"

	// managedBySlices marks EndpointSlices cornus maintains for a
	// selector-less network Service (the documented way for a custom
	// endpoints manager).
	managedBySlices = "cornus.dev"
)

// newID returns a fresh container ID: 64 hex digits, like Docker's.
func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// idLabel is the part of an ID that fits a label value.
func idLabel(id string) string {
	if len(id) > 32 {
		return id[:32]
	}
	return id
}

// dnsLabel turns s into an RFC 1123 label (lowercase alphanumerics and
// '-', at most max characters), appending a short hash of s when it had
// to change it, so distinct inputs stay distinct.
func dnsLabel(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	for strings.Contains(out, "--") && len(out) > max {
		out = strings.ReplaceAll(out, "--", "-")
	}
	if out == s && len(out) <= max && out != "" {
		return out
	}
	h := shortHash(s)
	if len(out) > max-len(h)-1 {
		out = strings.TrimRight(out[:max-len(h)-1], "-")
	}
	if out == "" {
		return "x" + h
	}
	return out + "-" + h
}

// labelValue makes s a valid label value, hashing what does not fit.
func labelValue(s string) string {
	if len(validateLabelValue(s)) == 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := b.String()
	h := shortHash(s)
	if len(out) > 63-len(h)-1 {
		out = out[:63-len(h)-1]
	}
	out = strings.Trim(out, "-_.")
	if out == "" {
		return "x" + h
	}
	return out + "-" + h
}

func validateLabelValue(s string) []string { return validation.IsValidLabelValue(s) }

// isDNSLabel reports whether s may be a hostname or DNS label as is.
func isDNSLabel(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

// podName is the object name of a container's pod, record and files
// Secret: its name, sanitized, and part of its ID, so a container renamed
// and another created under its old name (docker compose's recreate)
// never collide.
func podName(name, id string) string {
	return dnsLabel(name, 63-9) + "-" + id[:8]
}

// netObjectName is a network's Service, NetworkPolicy and search-domain
// label: its runtime name as a DNS label.
func netObjectName(runtimeName string) string { return dnsLabel(runtimeName, 63) }

// volObjectName is a named volume's PersistentVolumeClaim name.
func volObjectName(runtimeName string) string { return dnsLabel(runtimeName, 253) }

// containerName is the container's name inside its pod.
func containerName(app string) string {
	if app == "" {
		return "app"
	}
	return dnsLabel(app, 63)
}
