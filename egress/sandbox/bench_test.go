package sandbox

import (
	"testing"

	"github.com/cornus-dev/cornus/egress"
)

// BenchmarkSandboxPACDecide is a PAC decision through the sandbox, from
// one caller at a time, over ten destinations: after the first ten,
// answers remembered for the minute.
func BenchmarkSandboxPACDecide(b *testing.B) { benchSandbox(b, false) }

// BenchmarkSandboxPACDecideNew asks of a new destination each time: the
// pipe's round trip to the child on top of the decision.
func BenchmarkSandboxPACDecideNew(b *testing.B) { benchSandbox(b, true) }

func benchSandbox(b *testing.B, fresh bool) {
	s := New(Options{Command: selfChild})
	defer s.Close()
	p, err := s.Load(plainPAC, egress.PACOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var ds []egress.Destination
	for _, dest := range plainDests {
		d, _ := egress.ParseDestination(dest)
		ds = append(ds, d)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := ds[i%len(ds)]
		if fresh {
			d.Port = 1 + i%65535
		}
		p.Decide(d, egress.Cluster)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkPACDecideInProcess is the same script and destinations in
// this process, for comparison.
func BenchmarkPACDecideInProcess(b *testing.B) {
	p, err := egress.NewPAC(plainPAC, egress.PACOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var ds []egress.Destination
	for _, dest := range plainDests {
		d, _ := egress.ParseDestination(dest)
		ds = append(ds, d)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Decide(ds[i%len(ds)], egress.Cluster)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
