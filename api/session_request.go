package api

import (
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/policy"
)

// createSessionRequest is the body of POST /v1/sessions.
type createSessionRequest struct {
	Language string            `json:"language"`
	TTLS     int64             `json:"ttl_s"`
	Env      map[string]string `json:"env"`
	Limits   *limitsRequest    `json:"limits"`
}

// executeRequest is the body of POST /v1/sessions/{id}/execute.
type executeRequest struct {
	Code      *string           `json:"code"`
	TimeoutMS int64             `json:"timeout_ms"`
	Env       map[string]string `json:"env"`
	Queue     bool              `json:"queue"`
}

// toCreateOptions checks req against the kernels' limits, in the API's
// units.
func (s *server) toCreateOptions(req createSessionRequest) (kernels.CreateOptions, error) {
	var out kernels.CreateOptions
	tgt, err := s.targetFor(req.Language)
	if err != nil {
		return out, err
	}
	out.Template = tgt.template
	cfg := s.kernels.Config()
	if err := policy.Optional("ttl_s", req.TTLS, int64(cfg.MaxTTL/time.Second), int64(cfg.DefaultTTL/time.Second)); err != nil {
		return out, outOfRange(err)
	}
	out.TTL = time.Duration(req.TTLS) * time.Second
	limits, err := s.toRunOptions(req.Limits) // the same range as a run's
	if err != nil {
		return out, err
	}
	out.Limits = limits.Limits
	if out.Env, err = checkEnv(req.Env); err != nil {
		return out, err
	}
	return out, nil
}

// toExecuteOptions checks req against the kernels' limits, in the API's
// units.
func (s *server) toExecuteOptions(req executeRequest) (kernels.ExecuteOptions, error) {
	var out kernels.ExecuteOptions
	if req.Code == nil {
		return out, invalid("invalid_request", "code is required")
	}
	if *req.Code == "" {
		return out, invalid("invalid_request", "code must not be empty")
	}
	out.Code = *req.Code
	cfg := s.kernels.Config()
	if err := policy.Optional("timeout_ms", req.TimeoutMS, cfg.MaxTimeout.Milliseconds(), cfg.DefaultTimeout.Milliseconds()); err != nil {
		return out, outOfRange(err)
	}
	out.Timeout = time.Duration(req.TimeoutMS) * time.Millisecond
	var err error
	if out.Env, err = checkEnv(req.Env); err != nil {
		return out, err
	}
	out.Queue = req.Queue
	return out, nil
}
