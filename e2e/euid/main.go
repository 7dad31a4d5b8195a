// Command euid prints the effective user ID it runs with: the e2e tests
// plant it set-user-ID root in a client-local mount and check that it
// gives a container's user nothing. Static (CGO_ENABLED=0).
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(os.Geteuid()) }
