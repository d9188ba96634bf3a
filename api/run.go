package api

import (
	"encoding/base64"
	"math"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// runResponse is the body of a completed POST /v1/run. The *_base64 fields
// carry a stream's exact bytes when it is not valid UTF-8.
type runResponse struct {
	Stdout          string         `json:"stdout"`
	StdoutBase64    string         `json:"stdout_base64,omitempty"`
	Stderr          string         `json:"stderr"`
	StderrBase64    string         `json:"stderr_base64,omitempty"`
	ExitCode        int            `json:"exit_code"`
	Reason          runner.Reason  `json:"reason"`
	LimitsReached   []string       `json:"limits_reached,omitempty"`
	StdoutTruncated bool           `json:"stdout_truncated"`
	StderrTruncated bool           `json:"stderr_truncated"`
	Warm            bool           `json:"warm"`
	Start           core.StartKind `json:"start"`
	SandboxID       string         `json:"sandbox_id"`
	Template        string         `json:"template,omitempty"` // the template the run went to
	Runtime         string         `json:"runtime,omitempty"`  // what isolated the run: runsc or runc
	Timing          timingResponse `json:"timing"`

	// Outputs answers the request's outputs; OutputsTruncated says a cap
	// left a file out.
	Outputs          []outputResponse `json:"outputs,omitempty"`
	OutputsTruncated bool             `json:"outputs_truncated,omitempty"`

	// Network is what a networked run's egress proxy saw, and under
	// which policy.
	Network *networkResponse `json:"network,omitempty"`
}

type networkResponse struct {
	Policy      core.NetworkPolicy `json:"policy"`
	Connections int64              `json:"connections"`
	BytesOut    int64              `json:"bytes_out"`
	BytesIn     int64              `json:"bytes_in"`
	Refused     map[string]int64   `json:"refused"`
}

func newNetworkResponse(n *core.NetworkReport) *networkResponse {
	if n == nil {
		return nil
	}
	r := &networkResponse{Policy: n.Policy, Connections: n.Connections, BytesOut: n.BytesOut, BytesIn: n.BytesIn, Refused: n.Refused}
	if r.Refused == nil {
		r.Refused = map[string]int64{}
	}
	return r
}

type timingResponse struct {
	QueueMS   float64 `json:"queue_ms"`
	AcquireMS float64 `json:"acquire_ms"`
	StartMS   float64 `json:"start_ms"` // restoring or starting a sandbox on the request path; 0 on a pool hit
	ExecMS    float64 `json:"exec_ms"`
	TotalMS   float64 `json:"total_ms"`
	// ResumeMS, in a cell's answer, is the time spent waking its
	// hibernated session before the cell ran.
	ResumeMS float64 `json:"resume_ms,omitempty"`
}

// run serves POST /v1/run: one program on a fresh sandbox. The core
// checks the request once, before its Idempotency-Key is claimed, and
// runs the checked plan after.
func (s *server) run(c *gin.Context) {
	body, err := s.readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	req, err := decodeRunRequest(body)
	if err != nil {
		s.writeError(c, err)
		return
	}
	in, err := s.toRunInput(req)
	if err != nil {
		s.writeError(c, err)
		return
	}
	plan, err := s.core.CheckRun(caller(c), in)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.Set(keyTemplate, plan.Template())
	if format := streamFormat(c.GetHeader("Accept")); format != "" {
		if c.GetHeader(headerIdempotencyKey) != "" {
			s.writeError(c, invalid("stream_with_idempotency_key",
				"a streamed run (Accept: %s) cannot carry an Idempotency-Key: its output is not kept for a replay; send one or the other", format))
			return
		}
		s.runStream(c, plan, format)
		return
	}
	rj, replayed, err := s.claimRun(c, body)
	if err != nil {
		s.writeError(c, err)
		return
	}
	if replayed {
		return
	}
	defer rj.release()
	res, err := s.core.RunPlanned(c.Request.Context(), plan, nil)
	if res.SandboxID != "" {
		c.Set(keySandboxID, res.SandboxID)
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	resp := newRunResponse(res.Outcome)
	resp.Template, resp.Runtime, resp.Network = res.Template, res.Runtime, newNetworkResponse(res.Network)
	s.writeRun(c, rj, resp)
}

func newRunResponse(o core.Outcome) runResponse {
	r := o.Result
	resp := runResponse{
		ExitCode:        r.ExitCode,
		Reason:          r.Reason,
		LimitsReached:   r.LimitsReached,
		StdoutTruncated: r.StdoutTruncated,
		StderrTruncated: r.StderrTruncated,
		Warm:            o.Kind == core.StartPool,
		Start:           o.Kind,
		SandboxID:       o.SandboxID,
		Timing: timingResponse{
			QueueMS:   millis(o.Timing.Queue),
			AcquireMS: millis(o.Timing.Acquire),
			StartMS:   millis(o.Timing.Start),
			ExecMS:    millis(o.Timing.Exec),
			TotalMS:   millis(o.Timing.Total),
		},
	}
	resp.Outputs, resp.OutputsTruncated = newOutputResponses(r.Outputs), r.OutputsTruncated
	resp.Stdout, resp.StdoutBase64 = textAndBytes(r.Stdout)
	resp.Stderr, resp.StderrBase64 = textAndBytes(r.Stderr)
	return resp
}

// textAndBytes returns b as text, each invalid byte replaced by U+FFFD,
// and, only when b is not valid UTF-8, its exact bytes in base64.
func textAndBytes(b []byte) (string, string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	text := make([]rune, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		text = append(text, r) // RuneError for an invalid byte
		i += size
	}
	return string(text), base64.StdEncoding.EncodeToString(b)
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
