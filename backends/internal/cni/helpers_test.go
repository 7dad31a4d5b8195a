package cni

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testSubnetBase keeps test networks away from the default 10.4 a real
// cornus may use on this host.
const testSubnetBase = "10.213"

// realManager returns a Manager on a temp data dir, or skips (outside CI)
// or fails (CI=true) when root, the plugins or iptables are missing.
func realManager(t *testing.T) *Manager {
	t.Helper()
	need := func(msg string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if os.Geteuid() != 0 {
		need("needs root: run go test as root (CNI plugins create bridges, veths and iptables rules)")
	}
	m, err := New(t.TempDir(), WithEnv(os.Environ()), WithSubnetBase(testSubnetBase))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		need(err.Error())
	}
	return m
}

func suffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// firewallLines is the part of iptables-save that can only be ours: our
// chains, bridges, portmap's per-container chains and rules naming any
// of ids (container IDs, network names, subnets).
func firewallLines(t *testing.T, ids ...string) []string {
	t.Helper()
	out, err := exec.Command("iptables-save").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	// Only this test's rules: other packages' tests (run in parallel by
	// go test) change the firewall too. A rule names one of ids, or is in
	// a portmap chain such a rule jumps to.
	var all []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := sc.Text(); !strings.HasPrefix(l, "#") {
			all = append(all, l)
		}
	}
	mentions := func(l string, keys []string) bool {
		return slices.ContainsFunc(keys, func(k string) bool { return k != "" && strings.Contains(l, k) })
	}
	keys := slices.Clone(ids)
	for _, l := range all {
		if mentions(l, ids) {
			keys = append(keys, portmapChain.FindAllString(l, -1)...)
		}
	}
	var lines []string
	for _, l := range all {
		if mentions(l, keys) {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return lines
}

var portmapChain = regexp.MustCompile(`CNI-DN-[0-9a-f]+`)

// inNetns runs fn inside the namespace at path, failing the test on error.
func inNetns(t *testing.T, path string, fn func() error) {
	t.Helper()
	if err := Do(path, fn); err != nil {
		t.Fatal(err)
	}
}

// serveEcho starts TCP and UDP echo servers on port inside netns; the
// sockets keep living in the namespace (and keep it alive) until the
// returned func or the test's cleanup closes them.
func serveEcho(t *testing.T, netns string, port int) func() {
	t.Helper()
	var ln net.Listener
	var pc net.PacketConn
	inNetns(t, netns, func() error {
		var err error
		if ln, err = net.Listen("tcp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(port))); err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(port)))
		return err
	})
	stop := func() { _ = ln.Close(); _ = pc.Close() }
	t.Cleanup(stop)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				n, _ := c.Read(buf)
				_, _ = c.Write(append([]byte("echo:"), buf[:n]...))
			}()
		}
	}()
	go func() {
		buf := make([]byte, 512)
		for {
			n, src, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(append([]byte("echo:"), buf[:n]...), src)
		}
	}()
	return stop
}

// roundTrip sends msg over network to addr (from the namespace at netns
// when set) and returns the reply.
func roundTrip(t *testing.T, netns, network, addr, msg string) (string, error) {
	t.Helper()
	var c net.Conn
	dial := func() error {
		var err error
		c, err = net.DialTimeout(network, addr, 2*time.Second)
		return err
	}
	var err error
	if netns != "" {
		err = Do(netns, dial)
	} else {
		err = dial()
	}
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// dnsQueryA builds an A query for name with id.
func dnsQueryA(id uint16, name string) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = append(b, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0) // RD, one question
	for l := range strings.SplitSeq(name, ".") {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	b = append(b, 0, 0, typeA, 0, classIN)
	return b
}

// answerIPs reads rcode and A records out of a response to dnsQueryA.
func answerIPs(t *testing.T, resp []byte) (int, []netip.Addr) {
	t.Helper()
	if len(resp) < dnsHeaderLen {
		t.Fatalf("short DNS response %x", resp)
	}
	rcode := int(resp[3] & 0xF)
	an := int(binary.BigEndian.Uint16(resp[6:8]))
	_, off, err := readName(resp, dnsHeaderLen)
	if err != nil {
		t.Fatalf("response question: %v", err)
	}
	off += 4
	var ips []netip.Addr
	for i := 0; i < an; i++ {
		_, end, err := readName(resp, off)
		if err != nil || end+10 > len(resp) {
			t.Fatalf("answer %d malformed: %x", i, resp)
		}
		rdlen := int(binary.BigEndian.Uint16(resp[end+8 : end+10]))
		rd := resp[end+10 : end+10+rdlen]
		if binary.BigEndian.Uint16(resp[end:end+2]) == typeA && rdlen == 4 {
			ips = append(ips, netip.AddrFrom4([4]byte(rd)))
		}
		off = end + 10 + rdlen
	}
	return rcode, ips
}

// askDNS queries name at server over network ("udp" or "tcp"), from netns
// when set.
func askDNS(t *testing.T, netns, network string, server netip.AddrPort, name string) (int, []netip.Addr) {
	t.Helper()
	q := dnsQueryA(0x4242, name)
	var resp []byte
	do := func() error {
		c, err := net.DialTimeout(network, server.String(), 2*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		if network == "tcp" {
			q = append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...)
		}
		if _, err := c.Write(q); err != nil {
			return err
		}
		if network == "tcp" {
			var l [2]byte
			if _, err := io.ReadFull(c, l[:]); err != nil {
				return err
			}
			resp = make([]byte, binary.BigEndian.Uint16(l[:]))
			_, err = io.ReadFull(c, resp)
			return err
		}
		buf := make([]byte, 4096)
		n, err := c.Read(buf)
		resp = buf[:n]
		return err
	}
	var err error
	if netns != "" {
		err = Do(netns, do)
	} else {
		err = do()
	}
	if err != nil {
		t.Fatalf("DNS %s %s via %s: %v", name, network, server, err)
	}
	return answerIPs(t, resp)
}

func bg() context.Context { return context.Background() }

func itoa(i int) string { return strconv.Itoa(i) }
