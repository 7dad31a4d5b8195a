package incus

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// Where Docker runs too (br_netfilter loaded, iptables FORWARD policy
// DROP), traffic between containers on an Incus bridge and from them to
// the outside is dropped in the FORWARD chain, which Incus's own nftables
// rules cannot undo. cornus lets it through with two rules at the top of
// FORWARD for its bridges (and the default network): what Incus's
// documentation advises for hosts with Docker.
var forwardOnce sync.Map // network name → struct{}: ensured by this process

const forwardComment = "cornus incus"

func forwardRules(iface string) [][]string {
	c := []string{"-m", "comment", "--comment", forwardComment}
	return [][]string{
		append(append([]string{"-i", iface}, c...), "-j", "ACCEPT"),
		append(append([]string{"-o", iface, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED"}, c...), "-j", "ACCEPT"),
	}
}

// ensureForward makes sure FORWARD lets iface's traffic through; a host
// without iptables needs nothing.
func ensureForward(ctx context.Context, iface string) error {
	if _, done := forwardOnce.Load(iface); done {
		return nil
	}
	ipt, err := exec.LookPath("iptables")
	if err != nil {
		return nil
	}
	for _, r := range forwardRules(iface) {
		check := append([]string{"-w", "-C", "FORWARD"}, r...)
		if exec.CommandContext(ctx, ipt, check...).Run() == nil {
			continue
		}
		ins := append([]string{"-w", "-I", "FORWARD", "1"}, r...)
		if out, err := exec.CommandContext(ctx, ipt, ins...).CombinedOutput(); err != nil {
			return fmt.Errorf("let %s's traffic through the FORWARD chain: iptables %s: %v: %s", iface, strings.Join(ins, " "), err, strings.TrimSpace(string(out)))
		}
	}
	forwardOnce.Store(iface, struct{}{})
	return nil
}
