// Command markdial is the SO_MARK attack on transparent egress, for the
// e2e tests' busybox image: it marks its socket as the caretaker's own
// (0xc0e5, which the redirect skips) and connects to ADDR anyway, then
// sends an HTTP/1.0 GET and prints what came back. Two lines: "mark: ok"
// or the setsockopt error, and "read: <quoted reply>" or the dial error.
// Static (CGO_ENABLED=0), no dependencies but x/sys.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// mark is outbound.Mark (not imported: the tool stands for any app).
const mark = 0xc0e5

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: markdial HOST:PORT")
		os.Exit(2)
	}
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, mark) }); err != nil {
			return err
		}
		if serr != nil {
			fmt.Printf("mark: %v\n", serr)
		} else {
			fmt.Println("mark: ok")
		}
		return nil // connect either way: marked if it could
	}}
	c, err := d.Dial("tcp4", os.Args[1])
	if err != nil {
		fmt.Printf("dial: %v\n", err)
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, "GET / HTTP/1.0\r\n\r\n")
	b, _ := io.ReadAll(c)
	fmt.Printf("read: %q\n", b)
}
