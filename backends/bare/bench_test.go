package bare

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// BenchmarkCreateStartRemove times one container's whole life on the bare
// backend — create (root mounted, namespace attached), start (monitor,
// runc create and start), forced remove — and reports each phase.
func BenchmarkCreateStartRemove(b *testing.B) {
	be, _ := drillBackend(b)
	ctx := context.Background()
	var create, start, remove time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		c, err := be.Create(ctx, backends.ContainerSpec{Name: fmt.Sprintf("bench-%d", n), Image: drillImage,
			Command: []string{"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"}})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := be.Start(ctx, c.ID); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := be.Remove(ctx, c.ID, backends.RemoveOptions{Force: true}); err != nil {
			b.Fatal(err)
		}
		create, start, remove = create+t1.Sub(t0), start+t2.Sub(t1), remove+time.Since(t2)
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(n) }
	b.ReportMetric(ms(create), "create-ms/op")
	b.ReportMetric(ms(start), "start-ms/op")
	b.ReportMetric(ms(remove), "remove-ms/op")
}
