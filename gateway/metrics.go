package gateway

import (
	"bytes"
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// metrics answers /metrics with every up node's exposition, each sample
// labelled node="<name>", one family per metric name. A node's refusal
// (401, 403) is the answer as it is.
func (g *Gateway) metrics(w http.ResponseWriter, r *http.Request) {
	r.Header.Set("Accept", "text/plain; version=0.0.4")
	answers, down := g.ask(r, nil)
	if len(answers) == 0 {
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", "no Paddock node behind this gateway is up")
		return
	}
	families := map[string]*dto.MetricFamily{}
	for _, a := range answers {
		if a.status != http.StatusOK {
			copyAnswer(w, a)
			return
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(bytes.NewReader(a.body))
		if err != nil {
			g.log.Warn("unreadable metrics", "node", a.node.Name, "err", err)
			down = append(down, a.node.Name)
			continue
		}
		for name, mf := range mfs {
			for _, m := range mf.Metric {
				m.Label = append(m.Label, &dto.LabelPair{Name: proto.String("node"), Value: proto.String(a.node.Name)})
			}
			if have, ok := families[name]; ok && have.GetType() == mf.GetType() {
				have.Metric = append(have.Metric, mf.Metric...)
			} else if !ok {
				families[name] = mf
			}
		}
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(down) > 0 {
		w.Header().Set("X-Paddock-Nodes-Down", strings.Join(down, ","))
	}
	w.Header().Set("Content-Type", string(expfmt.FmtText))
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(w, families[n]); err != nil {
			return
		}
	}
}
