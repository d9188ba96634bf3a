package egress

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the instruments every proxy of a server shares.
type Metrics struct {
	refused     *prometheus.CounterVec // reason
	connections prometheus.Counter
	bytes       *prometheus.CounterVec // direction: out (to upstream), in (from upstream)
}

// NewMetrics makes the egress instruments and registers them in reg,
// when not nil: paddock_egress_refused_total{reason},
// paddock_egress_connections_total and
// paddock_egress_bytes_total{direction}.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paddock_egress_refused_total",
			Help: "Egress requests refused or connections cut, by reason.",
		}, []string{"reason"}),
		connections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paddock_egress_connections_total",
			Help: "Egress connections allowed and opened to an upstream.",
		}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paddock_egress_bytes_total",
			Help: "Bytes carried by egress connections, by direction (out: to upstream, in: from upstream).",
		}, []string{"direction"}),
	}
	for _, r := range Reasons {
		m.refused.WithLabelValues(r)
	}
	m.bytes.WithLabelValues("out")
	m.bytes.WithLabelValues("in")
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.refused, m.connections, m.bytes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
