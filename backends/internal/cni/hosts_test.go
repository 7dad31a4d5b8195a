package cni

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func storeOf(cs ...*Container) containersFile {
	cf := containersFile{Containers: map[string]*Container{}}
	for _, c := range cs {
		cf.Containers[c.ID] = c
	}
	return cf
}

func att(network, ip string, aliases ...string) Attachment {
	return Attachment{Network: network, IP: netip.MustParseAddr(ip), Aliases: aliases}
}

// Locks down the hosts file: localhost, own hostname on the first
// address, then every endpoint of each own network in attachment order,
// names deduplicated, pending and foreign-network peers left out.
func TestRenderHosts(t *testing.T) {
	cf := storeOf(
		&Container{ID: "web", Hostname: "web-1", Names: []string{"web"}, Attachments: []Attachment{att("front", "10.4.1.2"), att("back", "10.4.2.2")}},
		&Container{ID: "db", Names: []string{"db", "DB"}, Attachments: []Attachment{att("back", "10.4.2.3", "database", "db")}},
		&Container{ID: "lb", Names: []string{"lb"}, Attachments: []Attachment{att("front", "10.4.1.9")}},
		&Container{ID: "other", Names: []string{"other"}, Attachments: []Attachment{att("elsewhere", "10.4.3.2")}},
		&Container{ID: "new", Names: []string{"new"}, Attachments: []Attachment{{Network: "front", Pending: true}}},
	)
	want := "# Written by cornus; rewritten as peers come and go.\n" +
		"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"10.4.1.2\tweb-1\n" +
		"# network front\n10.4.1.2\tweb\n10.4.1.9\tlb\n" +
		"# network back\n10.4.2.2\tweb\n10.4.2.3\tdb database\n"
	if got := string(renderHosts(cf, "web")); got != want {
		t.Fatalf("hosts\n got %q\nwant %q", got, want)
	}
	noAddr := storeOf(&Container{ID: "x", Hostname: "x"})
	if got := string(renderHosts(noAddr, "x")); !strings.Contains(got, "127.0.1.1\tx\n") {
		t.Fatalf("without an address: %q", got)
	}
}

// Locks down in-place rewrites: the inode a bind mount pins stays, so the
// container sees new peers; a new file appears whole.
func TestWriteHostsKeepsInode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hosts")
	if err := writeHosts(p, []byte("first version, long\n")); err != nil {
		t.Fatal(err)
	}
	ino := func() uint64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	before := ino()
	for _, content := range []string{"short\n", "a much longer second version\n", "a much longer second version\n"} {
		if err := writeHosts(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != content {
			t.Fatalf("content %q, want %q", b, content)
		}
	}
	if ino() != before {
		t.Fatal("rewrite replaced the inode: a bind-mounted copy would go stale")
	}
}

// Fuzz: whatever names get past validation, each endpoint renders as
// exactly one "IP<TAB>names" line: no name can add or split a line.
func FuzzHostsNames(f *testing.F) {
	f.Add("web", "db", "db.internal")
	f.Add("a\nb", "#x", " ")
	f.Fuzz(func(t *testing.T, n1, n2, alias string) {
		var names, aliases []string
		for _, n := range []string{n1, n2} {
			if validHostName(n) == nil {
				names = append(names, n)
			}
		}
		if validHostName(alias) == nil {
			aliases = append(aliases, alias)
		}
		cf := storeOf(
			&Container{ID: "a", Hostname: "a", Names: names, Attachments: []Attachment{att("n", "10.0.0.2", aliases...)}},
			&Container{ID: "b", Names: []string{"b"}, Attachments: []Attachment{att("n", "10.0.0.3")}},
		)
		lines := strings.Split(strings.TrimSuffix(string(renderHosts(cf, "b")), "\n"), "\n")
		wantLines := 5
		if len(names)+len(aliases) > 0 {
			wantLines++
		}
		if len(lines) != wantLines {
			t.Fatalf("%d lines for names %q aliases %q:\n%s", len(lines), names, aliases, strings.Join(lines, "\n"))
		}
		for _, l := range lines {
			if strings.HasPrefix(l, "#") {
				continue
			}
			ip, rest, ok := strings.Cut(l, "\t")
			if _, err := netip.ParseAddr(ip); !ok || err != nil || strings.ContainsAny(rest, "\t#\r") {
				t.Fatalf("bad line %q", l)
			}
		}
	})
}
