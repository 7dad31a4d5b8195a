package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// Every route × {no token, wrong token, a caretaker token on a client
// route, a client token on the caretaker route, another tenant's client
// token on a project route}: 401 or 403, and nothing is done.
func TestEveryRouteRefusesWrongCredentials(t *testing.T) {
	ts := newTestServer(t)
	owned := uniqueProject("auth")
	ts.upAs(ts.alice, sleeperProject(owned))
	before := ts.containers(owned)
	caretaker := ts.caretakerToken(owned)
	fresh := uniqueProject("authnew")
	type cred struct {
		name, token string
		want        int
		applies     func(route string) bool
	}
	isRelay := func(r string) bool { return strings.Contains(r, "/relay/") }
	isProject := func(r string) bool { return strings.Contains(r, "{project}") }
	creds := []cred{
		{"no token", "", http.StatusUnauthorized, func(string) bool { return true }},
		{"wrong token", "cornus_not-a-token-of-this-server", http.StatusUnauthorized, func(string) bool { return true }},
		{"caretaker token on a client route", caretaker, http.StatusForbidden, func(r string) bool { return !isRelay(r) }},
		{"client token on the relay", ts.alice, http.StatusForbidden, isRelay},
		{"another tenant's token", ts.bob, http.StatusForbidden, func(r string) bool { return isProject(r) && !isRelay(r) }},
	}
	body := map[string]any{"spec": sleeperProject(owned)}
	for _, route := range Routes() {
		method, path, _ := strings.Cut(route, " ")
		for _, c := range creds {
			if !c.applies(route) {
				continue
			}
			t.Run(route+"/"+c.name, func(t *testing.T) {
				p := strings.ReplaceAll(path, "{project}", owned)
				code, resp := ts.request(method, p, c.token, body)
				if code != c.want {
					t.Fatalf("%s %s: %d, want %d: %s", method, p, code, c.want, resp)
				}
				for _, secret := range []string{ts.alice, ts.bob, caretaker} {
					if strings.Contains(resp, secret) {
						t.Fatal("an answer contains a token")
					}
				}
			})
		}
	}
	// A fresh project name with no token or a caretaker token: refused
	// the same way, and nothing is created.
	for _, tok := range []string{"", caretaker} {
		if code, _ := ts.request(http.MethodPost, "/v1/projects/"+fresh+"/up", tok, map[string]any{"spec": sleeperProject(fresh)}); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Fatalf("up of a fresh project without a client token: %d", code)
		}
	}
	if n := len(ts.containers(fresh)); n != 0 {
		t.Fatalf("a refused up created %d containers", n)
	}
	after := ts.containers(owned)
	if len(after) != len(before) || !slices.EqualFunc(after, before, func(a, b backends.Container) bool { return a.ID == b.ID && a.State == b.State }) {
		t.Fatalf("refused requests changed the project: before %v, after %v", before, after)
	}
	// The owner still gets in.
	if code, resp := ts.request(http.MethodGet, "/v1/projects/"+owned+"/ps", ts.alice, nil); code != http.StatusOK {
		t.Fatalf("owner's ps: %d %s", code, resp)
	}
}
