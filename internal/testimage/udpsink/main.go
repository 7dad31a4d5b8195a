// Command udpsink is a test-image helper, because Debian's busybox has no
// UDP server: it appends every datagram received on UDP port PORT to FILE.
//
//	udpsink PORT FILE
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: udpsink PORT FILE")
		os.Exit(2)
	}
	pc, err := net.ListenPacket("udp", ":"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f, err := os.OpenFile(os.Args[2], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buf := make([]byte, 64<<10)
	for {
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := f.Write(buf[:n]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
