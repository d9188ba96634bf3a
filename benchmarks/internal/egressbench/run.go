package egressbench

import (
	"context"
	"fmt"
	"net/http"

	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// answer is the part of a POST /v1/run answer the phase reads.
type answer struct {
	Stdout  string       `json:"stdout"`
	Stderr  string       `json:"stderr"`
	Reason  string       `json:"reason"`
	Start   string       `json:"start"`
	Timing  stats.Timing `json:"timing"`
	Network *struct {
		BytesIn int64            `json:"bytes_in"`
		Refused map[string]int64 `json:"refused"`
	} `json:"network"`
}

// runTimeoutMS is each run's wall-time limit: the server's default
// --max-timeout, far above the downloads' time.
const runTimeoutMS = 60000

// networkRequest is the run's network: the stand-in, nothing else.
var networkRequest = map[string]any{"allow": []string{fmt.Sprintf("%s:%d", standinName, standinPort)}}

// run posts a python run of code, with a network or not and with the
// limits given (nil: the template's), and wants it to end ok.
func run(ctx context.Context, s *server.Server, code string, network bool, limits map[string]any) (answer, error) {
	body := map[string]any{"language": "python", "code": code, "timeout_ms": runTimeoutMS}
	if network {
		body["network"] = networkRequest
	}
	if limits != nil {
		body["limits"] = limits
	}
	var a answer
	if err := s.PostJSON(ctx, "/v1/run", body, http.StatusOK, &a); err != nil {
		return a, err
	}
	if a.Reason != "ok" {
		return a, fmt.Errorf("run ended %s: stdout %q, stderr %q", a.Reason, a.Stdout, a.Stderr)
	}
	if network && a.Network == nil {
		return a, fmt.Errorf("a networked run's answer has no network report")
	}
	return a, nil
}
