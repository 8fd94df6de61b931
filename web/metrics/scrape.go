package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley/parley/db"
)

// backlogTimeout bounds the backlog's read at a scrape.
const backlogTimeout = 3 * time.Second

// scrapeCollector reads at each scrape what is not counted as it happens:
// the jobs waiting and the oldest pending webhook delivery (one query), and
// the database pool's use.
type scrapeCollector struct {
	opts Options

	jobs, oldestDelivery *prometheus.Desc

	poolTotal, poolIdle, poolAcquired, poolConstructing, poolMax              *prometheus.Desc
	poolAcquires, poolAcquireSeconds, poolEmptyAcquires, poolCanceledAcquires *prometheus.Desc
	poolWaiting                                                               *prometheus.Desc
}

func newScrapeCollector(opts Options) *scrapeCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &scrapeCollector{opts: opts,
		jobs: d("parley_job_queue_depth",
			"Background jobs not finished, across every instance, by queue and state (available: waiting for a worker; running; retryable: failed, to be tried again; scheduled: to run later).",
			"queue", "state"),
		oldestDelivery: d("parley_webhook_oldest_pending_delivery_age_seconds",
			"Age of the oldest webhook delivery not yet delivered nor given up, across every instance; 0 when none is pending."),
		poolTotal:            d("parley_db_pool_connections", "Database connections open in this instance's pool."),
		poolIdle:             d("parley_db_pool_idle_connections", "Database connections open and idle in this instance's pool."),
		poolAcquired:         d("parley_db_pool_acquired_connections", "Database connections in use in this instance's pool."),
		poolConstructing:     d("parley_db_pool_constructing_connections", "Database connections being opened in this instance's pool."),
		poolMax:              d("parley_db_pool_max_connections", "The most database connections this instance's pool opens (PARLEY_DB_MAX_CONNS)."),
		poolAcquires:         d("parley_db_pool_acquires_total", "Connections taken from this instance's pool."),
		poolAcquireSeconds:   d("parley_db_pool_acquire_seconds_total", "Time spent taking connections from this instance's pool, waits included."),
		poolEmptyAcquires:    d("parley_db_pool_empty_acquires_total", "Connections taken from this instance's pool that had to wait for one (none was idle)."),
		poolCanceledAcquires: d("parley_db_pool_canceled_acquires_total", "Waits for a connection of this instance's pool that were given up."),
		poolWaiting:          d("parley_db_pool_empty_acquire_wait_seconds_total", "Time spent waiting for a connection of this instance's pool when none was idle."),
	}
}

// Describe sends every description.
func (s *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.jobs, s.oldestDelivery, s.poolTotal, s.poolIdle, s.poolAcquired,
		s.poolConstructing, s.poolMax, s.poolAcquires, s.poolAcquireSeconds, s.poolEmptyAcquires,
		s.poolCanceledAcquires, s.poolWaiting} {
		ch <- d
	}
}

// Collect reads the backlog and the pool's statistics. A failed read
// leaves its series out of this scrape and is logged: the others, and the
// in-process counters, are still served.
func (s *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	if s.opts.Backlog != nil {
		s.collectBacklog(ch)
	}
	if p := s.opts.Pool; p != nil {
		st := p.Stat()
		gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
		}
		gauge(s.poolTotal, float64(st.TotalConns()))
		gauge(s.poolIdle, float64(st.IdleConns()))
		gauge(s.poolAcquired, float64(st.AcquiredConns()))
		gauge(s.poolConstructing, float64(st.ConstructingConns()))
		gauge(s.poolMax, float64(st.MaxConns()))
		counter(s.poolAcquires, float64(st.AcquireCount()))
		counter(s.poolAcquireSeconds, st.AcquireDuration().Seconds())
		counter(s.poolEmptyAcquires, float64(st.EmptyAcquireCount()))
		counter(s.poolCanceledAcquires, float64(st.CanceledAcquireCount()))
		counter(s.poolWaiting, st.EmptyAcquireWaitTime().Seconds())
	}
}

func (s *scrapeCollector) collectBacklog(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	b, err := s.opts.Backlog(ctx)
	if err != nil {
		if s.opts.Logger != nil {
			s.opts.Logger.Warn("metrics: reading the backlog", "err", err)
		}
		return
	}
	counts := map[[2]string]int64{}
	for _, q := range s.opts.Queues {
		for _, st := range db.JobStates {
			counts[[2]string{q, st}] = 0
		}
	}
	for _, j := range b.Jobs {
		counts[[2]string{j.Queue, j.State}] = j.Count
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(s.jobs, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	ch <- prometheus.MustNewConstMetric(s.oldestDelivery, prometheus.GaugeValue, b.OldestPendingDelivery.Seconds())
}
