package graphqldoor

import (
	"errors"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// documents is the parse cache: a document's text to its parsed and
// validated form, or to the errors that refused it (a hostile client
// repeating a bad document is not parsed again either). Entries are
// read-only once stored, so concurrent queries share them.
type documents struct {
	schema *ast.Schema
	lim    Limits
	lru    *lru.Cache[string, *parsed]
	hits   prometheus.Counter
	misses prometheus.Counter
}

type parsed struct {
	doc  *ast.QueryDocument
	errs gqlerror.List
}

func newDocuments(s *ast.Schema, lim Limits, size int, reg prometheus.Registerer) (*documents, error) {
	c, err := lru.New[string, *parsed](size)
	if err != nil {
		return nil, err
	}
	lookups := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paddock_graphql_documents_total",
		Help: "GraphQL documents looked up in the parse cache, by result: hit (parsed and validated before) or miss.",
	}, []string{"result"})
	if reg != nil {
		if err := reg.Register(lookups); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			lookups = are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
	return &documents{schema: s, lim: lim, lru: c, hits: lookups.WithLabelValues("hit"), misses: lookups.WithLabelValues("miss")}, nil
}

// get is query's document, parsed and validated once.
func (d *documents) get(query string) (*ast.QueryDocument, gqlerror.List) {
	if p, ok := d.lru.Get(query); ok {
		d.hits.Inc()
		return p.doc, p.errs
	}
	d.misses.Inc()
	p := &parsed{}
	doc, err := parser.ParseQuery(&ast.Source{Name: "query", Input: query})
	if err != nil {
		var ge *gqlerror.Error
		if !errors.As(err, &ge) {
			ge = gqlerror.Wrap(err)
		}
		p.errs = gqlerror.List{ge}
	} else if err := d.lim.shape(doc); err != nil {
		// Refused before validation, whose overlapping-fields rule is
		// quadratic in the fields of a selection: 2,000 of them in 32 KiB
		// took over a second.
		p.errs = gqlerror.List{{Message: err.msg, Extensions: map[string]any{"code": err.code}}}
	} else if errs := validator.Validate(d.schema, doc); len(errs) > 0 {
		p.errs = errs
	} else {
		p.doc = doc
	}
	for _, e := range p.errs {
		if e.Rule == "MaxIntrospectionDepth" { // gqlparser's own depth limit, on introspection's lists
			e.Extensions = map[string]any{"code": "depth_limit"}
			e.Message += " (lists nest more than 3 deep under __schema or __type: the depth limit)"
		}
	}
	withCode(p.errs, "invalid_query") // before sharing: cached errors are read-only
	d.lru.Add(query, p)
	return p.doc, p.errs
}
