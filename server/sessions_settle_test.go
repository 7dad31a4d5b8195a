package server

import (
	"testing"
	"time"
)

// TestLiveWaitsForRegistration: the CLI opens its agent session and sends
// exec --forward-agent at once, and the server registers a session only
// after the WebSocket upgrade answered. live must wait for it as
// forRequest does (a CI run failed with "no live session … of yours").
func TestLiveWaitsForRegistration(t *testing.T) {
	ss := &sessions{byID: map[string]*session{}, byProject: map[string]*session{}, deploying: map[string]*session{}}
	s := &session{id: "0123456789abcdef", tenant: "alice"}
	go func() {
		time.Sleep(200 * time.Millisecond)
		ss.mu.Lock()
		ss.byID[s.id] = s
		ss.mu.Unlock()
	}()
	got, err := ss.live(s.id, "alice")
	if err != nil || got != s {
		t.Fatalf("live before registration: %v, %v", got, err)
	}
	if _, err := ss.live(s.id, "bob"); err == nil {
		t.Fatal("another tenant's session was live for bob")
	}
}
