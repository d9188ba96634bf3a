package store

import "github.com/prometheus/client_golang/prometheus"

// Reasons a record is dropped (paddock_store_dropped_total's label).
const (
	dropQueueFull  = "queue_full"  // the queue was full
	dropWriteError = "write_error" // its batch failed to be written
	dropClosed     = "closed"      // recorded after Close, or left when Close's ctx ended
)

// metrics are the store's instruments.
type metrics struct {
	written     *prometheus.CounterVec // table
	dropped     *prometheus.CounterVec // reason
	writeErrors prometheus.Counter
	pruned      *prometheus.CounterVec // table
}

// newMetrics registers the store's instruments in reg, when not nil;
// queueLen reports the queue's length at each scrape.
func newMetrics(reg prometheus.Registerer, queueLen func() float64) (*metrics, error) {
	m := &metrics{
		written: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paddock_store_written_total",
			Help: "Records written to the history database, by table.",
		}, []string{"table"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paddock_store_dropped_total",
			Help: "Records not written to the history database, by reason (queue_full, write_error, closed).",
		}, []string{"reason"}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paddock_store_write_errors_total",
			Help: "Failed writes (batches, prunes) to the history database; the log says why.",
		}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paddock_store_pruned_total",
			Help: "Records removed from the history database by retention, by table.",
		}, []string{"table"}),
	}
	for _, r := range []string{dropQueueFull, dropWriteError, dropClosed} {
		m.dropped.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "paddock_store_queue_length",
		Help: "Records waiting to be written to the history database.",
	}, queueLen)
	for _, c := range []prometheus.Collector{m.written, m.dropped, m.writeErrors, m.pruned, queue} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
