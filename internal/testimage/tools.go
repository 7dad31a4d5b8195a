package testimage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// udpSinkPkg is the helper udpsink, built for images with Options.UDPSink.
const udpSinkPkg = "github.com/cornus-dev/cornus/internal/testimage/udpsink"

// udpSink builds udpsink once per process (static, no cgo) and returns it.
var udpSink = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "cornus-udpsink-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "udpsink")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, udpSinkPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %v\n%s", udpSinkPkg, err, msg)
	}
	return os.ReadFile(out)
})
