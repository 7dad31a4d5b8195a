// Command agentlist is `ssh-add -l` for the e2e tests' busybox image: it
// asks the agent at $SSH_AUTH_SOCK for its identities (the agent
// protocol's REQUEST_IDENTITIES) and prints one line per key, "<bits
// unknown> <comment>", or "The agent has no identities." as ssh-add does.
// Static (CGO_ENABLED=0), no dependencies.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
)

const (
	requestIdentities = 11
	identitiesAnswer  = 12
	maxMessage        = 256 << 10
)

func main() {
	if err := list(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentlist:", err)
		os.Exit(2)
	}
}

func list(w io.Writer) error {
	c, err := net.Dial("unix", os.Getenv("SSH_AUTH_SOCK"))
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte{0, 0, 0, 1, requestIdentities}); err != nil {
		return err
	}
	var n uint32
	if err := binary.Read(c, binary.BigEndian, &n); err != nil {
		return err
	}
	if n == 0 || n > maxMessage {
		return fmt.Errorf("answer of %d bytes", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(c, msg); err != nil {
		return err
	}
	if msg[0] != identitiesAnswer || len(msg) < 5 {
		return fmt.Errorf("answer type %d", msg[0])
	}
	count := binary.BigEndian.Uint32(msg[1:5])
	rest := msg[5:]
	if count == 0 {
		fmt.Fprintln(w, "The agent has no identities.")
		return nil
	}
	for range count {
		var blob, comment []byte
		if blob, rest, err = str(rest); err != nil {
			return err
		}
		if comment, rest, err = str(rest); err != nil {
			return err
		}
		typ, _, err := str(blob)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %s\n", typ, comment)
	}
	return nil
}

// str reads one SSH string (uint32 length, bytes).
func str(b []byte) ([]byte, []byte, error) {
	if len(b) < 4 {
		return nil, nil, errors.New("short message")
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, errors.New("short message")
	}
	return b[4 : 4+n], b[4+n:], nil
}
