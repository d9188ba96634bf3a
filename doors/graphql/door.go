package graphqldoor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// Door is the name the door's calls carry in the core (metrics, history).
const Door = "graphql"

// Path is where the door answers, GET and POST.
const Path = "/v1/graphql"

// Options configure the door.
type Options struct {
	// Limits bound each document; zero fields take DefaultLimits'.
	Limits Limits
	// CacheSize is how many documents the parse cache keeps (default
	// 256).
	CacheSize int
	// MaxBodyBytes bounds a POST body (default 1 MiB).
	MaxBodyBytes int64
	// Timeout bounds one query's execution (default 30 s).
	Timeout time.Duration
	// Registerer receives the door's metrics; nil registers none.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	Now        func() time.Time
}

type door struct {
	core   Core
	opts   Options
	schema *ast.Schema
	cache  *documents
	lists  map[string]int
}

// Mount returns the function that adds the door's routes to an engine.
func Mount(c Core, opts Options) (func(*gin.Engine), error) {
	d, err := newDoor(c, opts)
	if err != nil {
		return nil, err
	}
	return func(r *gin.Engine) {
		r.GET(Path, d.serve)
		r.POST(Path, d.serve)
	}, nil
}

func newDoor(c Core, opts Options) (*door, error) {
	def := DefaultLimits
	if opts.Limits.MaxQueryBytes <= 0 {
		opts.Limits.MaxQueryBytes = def.MaxQueryBytes
	}
	if opts.Limits.MaxDepth <= 0 {
		opts.Limits.MaxDepth = def.MaxDepth
	}
	if opts.Limits.MaxBreadth <= 0 {
		opts.Limits.MaxBreadth = def.MaxBreadth
	}
	if opts.Limits.MaxSelections <= 0 {
		opts.Limits.MaxSelections = def.MaxSelections
	}
	if opts.Limits.MaxCost <= 0 {
		opts.Limits.MaxCost = def.MaxCost
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = 256
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s, err := loadSchema()
	if err != nil {
		return nil, err
	}
	cache, err := newDocuments(s, opts.Limits, opts.CacheSize, opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &door{core: c, opts: opts, schema: s, cache: cache, lists: introspectionSizes(s)}, nil
}

// request is a GraphQL-over-HTTP request.
type request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// response is the answer to a request refused before it ran: errors, no
// data.
type response struct {
	Errors gqlerror.List `json:"errors,omitempty"`
}

// executed is the answer to a request that ran: data (null when a
// non-null root field failed) and the errors of its fields.
type executed struct {
	Errors gqlerror.List `json:"errors,omitempty"`
	Data   any           `json:"data"`
}

func (d *door) serve(c *gin.Context) {
	caller, ok := d.authenticate(c)
	if !ok {
		return
	}
	req, err := d.read(c)
	if err != nil {
		d.refuse(c, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if req.Query == "" {
		d.refuse(c, http.StatusBadRequest, "invalid_request", "the request has no query")
		return
	}
	if len(req.Query) > d.opts.Limits.MaxQueryBytes {
		d.refuse(c, http.StatusBadRequest, "query_too_large",
			fmt.Sprintf("the query is %d bytes, over the limit of %d", len(req.Query), d.opts.Limits.MaxQueryBytes))
		return
	}
	doc, errs := d.cache.get(req.Query)
	if len(errs) > 0 {
		d.answer(c, http.StatusBadRequest, response{Errors: errs})
		return
	}
	op, err := operation(doc, req.OperationName)
	if err != nil {
		d.refuse(c, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if c.Request.Method == http.MethodGet && op.Operation != ast.Query {
		d.refuse(c, http.StatusMethodNotAllowed, "invalid_request", "GET carries queries only; POST the rest")
		return
	}
	vars, err := validator.VariableValues(d.schema, op, req.Variables)
	if err != nil {
		var ge *gqlerror.Error
		if !errors.As(err, &ge) {
			ge = gqlerror.Wrap(err)
		}
		d.answer(c, http.StatusBadRequest, response{Errors: withCode(gqlerror.List{ge}, "invalid_variables")})
		return
	}
	w := weigher{lim: d.opts.Limits, vars: vars, lists: d.lists}
	if err := w.check(op); err != nil {
		var le *limitError
		errors.As(err, &le)
		d.refuse(c, http.StatusBadRequest, le.code, le.msg)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), d.opts.Timeout)
	defer cancel()
	r := &resolver{schema: d.schema, core: d.core, caller: caller, now: d.opts.Now}
	e := &execution{ctx: ctx, vars: vars, code: errorCode}
	data := d.execute(e, r, op)
	d.answer(c, http.StatusOK, executed{Data: data, Errors: e.errs})
}

// execute runs op; a panic in a resolver is an internal error of the
// query, not of the server.
func (d *door) execute(e *execution, r *resolver, op *ast.OperationDefinition) (data any) {
	defer func() {
		if p := recover(); p != nil {
			d.opts.Logger.Error("graphql query panicked", "panic", fmt.Sprint(p))
			e.errs = append(e.errs, &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": "internal"}})
			data = nil
		}
	}()
	if m := e.run(r.query, op); m != nil {
		return m
	}
	return nil
}

// authenticate answers 401 or 429 through the core with a GraphQL body.
func (d *door) authenticate(c *gin.Context) (core.Caller, bool) {
	header := c.GetHeader("Authorization")
	caller, err := d.core.AuthenticateWith(core.PeerAddr(c.Request.RemoteAddr), Door, func() (string, error) {
		return edge.Bearer(header)
	})
	if err == nil {
		var q core.Quota
		q, err = d.core.AdmitQuota(caller)
		edge.RateLimit(c.Writer.Header(), q)
	}
	if err != nil {
		e := core.Classify(err)
		if e.Kind == core.KindUnauthenticated {
			c.Header("WWW-Authenticate", `Bearer realm="paddock"`)
		}
		edge.RetryAfter(c.Writer.Header(), e.RetryAfter)
		d.refuse(c, edge.Status(e.Kind, nil), e.Code, e.Message)
		return caller, false
	}
	return caller, true
}

// read decodes the request from a POST body or GET's query string.
func (d *door) read(c *gin.Context) (request, error) {
	var req request
	if c.Request.Method == http.MethodGet {
		req.Query = c.Query("query")
		req.OperationName = c.Query("operationName")
		if v := c.Query("variables"); v != "" {
			if err := decode([]byte(v), &req.Variables); err != nil {
				return req, fmt.Errorf("variables is not a JSON object: %v", err)
			}
		}
		return req, nil
	}
	ct := c.GetHeader("Content-Type")
	if ct != "" && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/graphql-response+json") {
		return req, fmt.Errorf("the body must be application/json, not %q", ct)
	}
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, d.opts.MaxBodyBytes+1))
	if err != nil {
		return req, fmt.Errorf("reading the body: %v", err)
	}
	if int64(len(body)) > d.opts.MaxBodyBytes {
		return req, fmt.Errorf("the body is over %d bytes", d.opts.MaxBodyBytes)
	}
	if err := decode(body, &req); err != nil {
		return req, fmt.Errorf("the body is not a GraphQL request ({\"query\": ..., \"variables\": {...}}): %v", err)
	}
	return req, nil
}

func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// operation picks the operation to run.
func operation(doc *ast.QueryDocument, name string) (*ast.OperationDefinition, error) {
	if name != "" {
		if op := doc.Operations.ForName(name); op != nil {
			return op, nil
		}
		return nil, fmt.Errorf("the document has no operation named %q", name)
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("the document has %d operations: name one with operationName", len(doc.Operations))
	}
	return doc.Operations[0], nil
}

// refuse answers a request error: no data, one error with its code.
func (d *door) refuse(c *gin.Context, status int, code, msg string) {
	d.answer(c, status, response{Errors: gqlerror.List{{Message: msg, Extensions: map[string]any{"code": code}}}})
}

func (d *door) answer(c *gin.Context, status int, r any) {
	ct := "application/json; charset=utf-8"
	if strings.Contains(c.GetHeader("Accept"), "application/graphql-response+json") {
		ct = "application/graphql-response+json; charset=utf-8"
	}
	body, err := json.Marshal(r)
	if err != nil {
		d.opts.Logger.Error("encoding a graphql answer", "error", err)
		status, body = http.StatusInternalServerError, []byte(`{"errors":[{"message":"internal error","extensions":{"code":"internal"}}]}`)
	}
	c.Data(status, ct, body)
}

// withCode gives each error without a code the code given.
func withCode(errs gqlerror.List, code string) gqlerror.List {
	for _, e := range errs {
		if e.Extensions == nil {
			e.Extensions = map[string]any{}
		}
		if _, ok := e.Extensions["code"]; !ok {
			e.Extensions["code"] = code
		}
	}
	return errs
}

// errorCode is the code and message a field's error shows: the core's
// code, or the door's.
func errorCode(err error) (string, string) {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.Code, fe.Message
	}
	e := core.Classify(err)
	return e.Code, e.Message
}
