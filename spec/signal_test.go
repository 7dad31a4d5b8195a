package spec

import (
	"encoding/json"
	"testing"
)

// A Signal travels as its name, so records written before it was typed (a
// string) read back, and "" stays the default.
func TestSignalText(t *testing.T) {
	var got struct{ A, B, C Signal }
	if err := json.Unmarshal([]byte(`{"A":"SIGUSR1","B":"9","C":""}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.A != 10 || got.B != SIGKILL || got.C != 0 {
		t.Fatalf("decoded %+v, want {10 9 0}", got)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"A":"SIGUSR1","B":"SIGKILL","C":""}` {
		t.Fatalf("encoded %s", b)
	}
	if err := json.Unmarshal([]byte(`{"A":"SIGNOPE"}`), &got); err == nil {
		t.Fatal("SIGNOPE decoded without error")
	}
}

func TestSignalOr(t *testing.T) {
	for name, want := range map[string]Signal{"SIGINT": 2, "hup": 1, "": SIGTERM, "NOPE": SIGTERM} {
		if got := SignalOr(name, SIGTERM); got != want {
			t.Errorf("SignalOr(%q) = %v, want %v", name, got, want)
		}
	}
}
