package listing

// SetSearchIndexFirstMax sets how many matching messages a search reads off
// the trigram index at most before it walks the conversations instead
// (negative: always walk).
func (d *Listings) SetSearchIndexFirstMax(n int) { d.indexFirstMax = n }

// WithoutResolution is q computing no resolution: the stats as they were
// before it, for the benchmark's comparison.
func WithoutResolution(q StatsQuery) StatsQuery {
	q.noResolution = true
	return q
}
