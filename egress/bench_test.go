package egress

import (
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// BenchmarkPACDecide is PAC decisions on one core (target ≥ 20k/s): the
// 7-branch script of the agreement test, over the 50 destinations.
func BenchmarkPACDecide(b *testing.B) {
	p, err := Compile(&spec.Egress{Script: pacScript, Default: Cluster}, "egress", PACOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var ds []Destination
	for _, s := range fiftyDestinations() {
		d, _ := ParseDestination(s)
		ds = append(ds, d)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Decide(ds[i%len(ds)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkRulesDecide is the same policy as first-match rules.
func BenchmarkRulesDecide(b *testing.B) {
	p, _ := Compile(rulesPolicy, "egress", PACOptions{})
	var ds []Destination
	for _, s := range fiftyDestinations() {
		d, _ := ParseDestination(s)
		ds = append(ds, d)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Decide(ds[i%len(ds)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
