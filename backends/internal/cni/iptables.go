package cni

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Our chains. Every rule of a network carries the comment
// "cornus network NAME", so leftovers are easy to find and to test for.
const (
	chainForward     = "CORNUS-FORWARD"
	chainInput       = "CORNUS-INPUT"
	chainPostrouting = "CORNUS-POSTROUTING"
)

// ourChains are created with the first network and deleted with the last.
func ourChains() []rule {
	return []rule{{table: "filter", chain: chainForward}, {table: "filter", chain: chainInput}, {table: "nat", chain: chainPostrouting}}
}

// rule is one iptables rule spec in a table and chain.
type rule struct {
	table, chain string
	args         []string
}

func comment(network string) []string {
	return []string{"-m", "comment", "--comment", "cornus network " + network}
}

// networkRules are the rules one network needs (see doc.go): inserted at
// the top of CORNUS-FORWARD, above the isolation drops. It does no I/O.
func networkRules(n Network) []rule {
	br, c := n.Bridge, comment(n.Name)
	fwd := func(args ...string) rule {
		return rule{"filter", chainForward, append(append(args, c...), "-j", "ACCEPT")}
	}
	rs := []rule{
		fwd("-i", br, "-o", br),
		fwd("-o", br, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED"),
		// Published ports: portmap DNATs, we let the new flow through.
		fwd("-o", br, "-m", "conntrack", "--ctstate", "DNAT"),
	}
	if !n.Internal {
		rs = append(rs,
			fwd("-i", br, "!", "-o", bridgePrefix+"+"),
			rule{"nat", chainPostrouting, append(append([]string{"-s", n.Subnet.String(), "!", "-o", br}, c...), "-j", "MASQUERADE")},
		)
	}
	return rs
}

// baseRules do not depend on a network. The isolation drops end
// CORNUS-FORWARD: whatever the accepts above did not take and touches one
// of our bridges is dropped, so networks stay isolated even where
// FORWARD's policy is ACCEPT. The loopback guard answers portmap setting
// route_localnet on a bridge (to publish on 127.0.0.1): without it a
// container could send packets for 127.0.0.1 to the host and reach
// services bound to loopback only (CVE-2020-8558, fixed the same way in
// kube-proxy).
func baseRules() []rule {
	c := func(s string) []string { return []string{"-m", "comment", "--comment", s} }
	return []rule{
		{"filter", chainForward, append(append([]string{"-i", bridgePrefix + "+"}, c("cornus isolation")...), "-j", "DROP")},
		{"filter", chainForward, append(append([]string{"-o", bridgePrefix + "+"}, c("cornus isolation")...), "-j", "DROP")},
		loopbackGuard(),
	}
}

func loopbackGuard() rule {
	return rule{"filter", chainInput, []string{"-i", bridgePrefix + "+", "-d", "127.0.0.0/8",
		"-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT",
		"-m", "comment", "--comment", "cornus no host loopback from containers", "-j", "DROP"}}
}

// jumpRules hook our chains in. FORWARD and POSTROUTING get them appended,
// so rules the admin or docker put first (DOCKER-USER) still apply; INPUT
// gets the loopback guard first, as nothing should accept those packets.
func jumpRules() []rule {
	return []rule{
		{"filter", "FORWARD", []string{"-j", chainForward}},
		{"filter", "INPUT", []string{"-j", chainInput}},
		{"nat", "POSTROUTING", []string{"-j", chainPostrouting}},
	}
}

// iptables runs the iptables binary; -w waits for the xtables lock that
// docker and the plugins take too.
type iptables struct{ bin string }

func (m *Manager) iptables() (iptables, error) {
	bin, err := m.iptablesBin()
	return iptables{bin}, err
}

func (t iptables) run(ctx context.Context, args ...string) error {
	_, err := t.output(ctx, args...)
	return err
}

// output runs iptables and returns its stdout; errors carry its stderr.
func (t iptables) output(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.bin, append([]string{"-w", "10"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// exists runs -C. Exit status 1 means no such rule (or chain); 2 with
// "does not exist" means the rule's target chain is gone, so no rule
// can jump to it either.
func (t iptables) exists(ctx context.Context, r rule) (bool, error) {
	err := t.run(ctx, append([]string{"-t", r.table, "-C", r.chain}, r.args...)...)
	var ee *exec.ExitError
	if errors.As(err, &ee) && (ee.ExitCode() == 1 || ee.ExitCode() == 2 && strings.Contains(err.Error(), "does not exist")) {
		return false, nil
	}
	return err == nil, err
}

// ensure adds r unless present, at the top of its chain or at the end.
func (t iptables) ensure(ctx context.Context, r rule, top bool) error {
	ok, err := t.exists(ctx, r)
	if err != nil || ok {
		return err
	}
	op := []string{"-A", r.chain}
	if top {
		op = []string{"-I", r.chain, "1"}
	}
	return t.run(ctx, append(append([]string{"-t", r.table}, op...), r.args...)...)
}

// remove deletes every copy of r; absent is fine.
func (t iptables) remove(ctx context.Context, r rule) error {
	for {
		ok, err := t.exists(ctx, r)
		if err != nil || !ok {
			return err
		}
		if err := t.run(ctx, append([]string{"-t", r.table, "-D", r.chain}, r.args...)...); err != nil {
			return err
		}
	}
}

func (t iptables) chainExists(ctx context.Context, table, chain string) bool {
	return t.run(ctx, "-t", table, "-S", chain) == nil
}

func (t iptables) ensureChain(ctx context.Context, table, chain string) error {
	if t.chainExists(ctx, table, chain) {
		return nil
	}
	return t.run(ctx, "-t", table, "-N", chain)
}

func (t iptables) deleteChain(ctx context.Context, table, chain string) error {
	if !t.chainExists(ctx, table, chain) {
		return nil
	}
	if err := t.run(ctx, "-t", table, "-F", chain); err != nil {
		return err
	}
	return t.run(ctx, "-t", table, "-X", chain)
}

// hostLockPath serializes changes to our chains between all cornus
// processes on the host, whatever their data dir: the chains and their
// jumps are host-global, so "is this the last network" must be too. It is
// always taken inside the data-dir lock, never the other way round.
const hostLockPath = "/run/lock/cornus-cni-firewall.lock"

func hostLock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(hostLockPath), 0o755); err != nil {
		return nil, fmt.Errorf("cni: host lock: %w", err)
	}
	return lockFile(ctx, hostLockPath)
}

// ensureFirewall installs n's rules, creating our chains and their jumps on
// first use.
func (t iptables) ensureFirewall(ctx context.Context, n Network) error {
	unlock, err := hostLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for _, c := range ourChains() {
		if err := t.ensureChain(ctx, c.table, c.chain); err != nil {
			return err
		}
	}
	for _, r := range baseRules() {
		if err := t.ensure(ctx, r, false); err != nil {
			return err
		}
	}
	for _, r := range networkRules(n) {
		if err := t.ensure(ctx, r, r.table == "filter"); err != nil {
			return err
		}
	}
	for _, r := range jumpRules() {
		if err := t.ensure(ctx, r, r.chain == "INPUT"); err != nil {
			return err
		}
	}
	return nil
}

// firewallPresent is the cheap check Attach makes: a network's first rule
// and our FORWARD jump (both gone after a host reboot).
func (t iptables) firewallPresent(ctx context.Context, n Network) (bool, error) {
	for _, r := range []rule{networkRules(n)[0], jumpRules()[0]} {
		if ok, err := t.exists(ctx, r); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// removeFirewall deletes n's rules, then our chains and jumps once no
// network on the host (any data dir) has rules left in them.
func (t iptables) removeFirewall(ctx context.Context, n Network) error {
	unlock, err := hostLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for _, r := range networkRules(n) {
		if err := t.remove(ctx, r); err != nil {
			return err
		}
	}
	for _, c := range ourChains() {
		out, err := t.output(ctx, "-t", c.table, "-S", c.chain)
		if err != nil {
			continue // chain gone already
		}
		if strings.Contains(out, `--comment "cornus network `) {
			return nil // another network still needs the chains
		}
	}
	var errs []error
	for _, r := range jumpRules() {
		errs = append(errs, t.remove(ctx, r))
	}
	for _, c := range ourChains() {
		errs = append(errs, t.deleteChain(ctx, c.table, c.chain))
	}
	return errors.Join(errs...)
}
