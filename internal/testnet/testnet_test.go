package testnet

import "testing"

// The ports handed out are below the kernel's ephemeral range, so no
// listener on port 0 gets one while a test publishes it (CI72), and are
// distinct while held.
func TestFreePortBelowEphemeral(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p := FreePort(t)
		if p < 10000 || p >= 30000 || seen[p] {
			t.Fatalf("port %d: outside 10000-29999 or handed out twice", p)
		}
		seen[p] = true
	}
}
