package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/runner"
)

// Idempotent runs (POST /v1/run with an Idempotency-Key): the key, scoped
// to the tenant, names one request body (by its SHA-256). The first
// request records its job running before it runs and its response once
// done; a retry gets that response again, 409 while it runs, or, when
// the server died during the run, a result with reason "interrupted".
// Only a completed run is kept: a refused or failed one (4xx, 5xx, a
// client gone) forgets its key, so a retry runs.
const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotent-Replayed"
	maxIdempotencyKey    = 128
)

// JobStore keeps idempotent runs' jobs, with the semantics package jobs
// documents for Begin, Finish and Forget.
type JobStore interface {
	Begin(tenant, key, digest string) (jobs.Job, error)
	Finish(job jobs.Job, result json.RawMessage) error
	Forget(job jobs.Job) error
}

// interruptedExitCode is an interrupted run's exit code: the crashed
// server's successor destroyed its sandbox with SIGKILL.
const interruptedExitCode = 128 + 9

// runJob is a keyed run's hold on its job until it is finished or
// released. A nil *runJob (a run without a key) does nothing.
type runJob struct {
	s       *server
	job     jobs.Job
	settled bool
}

// claimRun handles the request's Idempotency-Key. Without one it returns
// a nil job. When the key's job is finished it answers the request from
// it and reports replayed. Otherwise the caller runs the request under
// the returned job and must call release when done.
func (s *server) claimRun(c *gin.Context, body []byte) (rj *runJob, replayed bool, err error) {
	key, err := idempotencyKey(c.Request.Header)
	if err != nil || key == "" {
		return nil, false, err
	}
	if s.cfg.Jobs == nil {
		return nil, false, errNoJobs
	}
	sum := sha256.Sum256(body)
	job, err := s.cfg.Jobs.Begin(caller(c).Tenant, key, hex.EncodeToString(sum[:]))
	if err != nil {
		if !errors.Is(err, jobs.ErrInProgress) && !errors.Is(err, jobs.ErrKeyReused) && !errors.Is(err, jobs.ErrFull) {
			// The store itself failed (a broken database, a full disk):
			// the key could not be claimed, so nothing runs.
			s.log.Error("claiming an idempotency key failed", "error", err)
			err = errJobsUnavailable
		}
		return nil, false, err
	}
	switch job.State {
	case jobs.Running:
		return &runJob{s: s, job: job}, false, nil
	case jobs.Done:
		c.Header(headerReplayed, "true")
		c.Data(http.StatusOK, jsonContentType, append(job.Result, '\n'))
	default: // interrupted
		c.Header(headerReplayed, "true")
		writeJSON(c, http.StatusOK, runResponse{ExitCode: interruptedExitCode, Reason: runner.ReasonInterrupted})
	}
	return nil, true, nil
}

// idempotencyKey returns the Idempotency-Key header, "" when absent: one
// value of 1 to 128 printable ASCII characters.
func idempotencyKey(h http.Header) (string, error) {
	vals := h.Values(headerIdempotencyKey)
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1:
		return "", invalid("invalid_idempotency_key", "send one Idempotency-Key header, not %d", len(vals))
	}
	key := vals[0]
	if len(key) == 0 || len(key) > maxIdempotencyKey {
		return "", invalid("invalid_idempotency_key", "Idempotency-Key must have 1 to %d characters, got %d",
			maxIdempotencyKey, len(key))
	}
	for i := range len(key) {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", invalid("invalid_idempotency_key",
				"Idempotency-Key must be printable ASCII; byte %d is 0x%02x", i, key[i])
		}
	}
	return key, nil
}

// writeRun writes a completed run's response; for a keyed run it first
// stores it as the job's result. A result that cannot be stored is
// logged and still answered; the key is then free again.
func (s *server) writeRun(c *gin.Context, rj *runJob, resp runResponse) {
	data := encodeJSON(resp)
	if rj != nil {
		rj.settled = true
		if err := s.cfg.Jobs.Finish(rj.job, bytes.TrimSuffix(data, []byte("\n"))); err != nil {
			level := s.log.Error
			if errors.Is(err, jobs.ErrFull) {
				level = s.log.Warn
			}
			level("could not keep an idempotent run's result; a retry will run again",
				keyTenant, rj.job.Tenant, keySandboxID, resp.SandboxID, "error", err)
		}
	}
	c.Data(http.StatusOK, jsonContentType, data)
}

// release forgets the job of a run that did not complete, so that a
// retry can run. It does nothing once writeRun has stored the result.
func (rj *runJob) release() {
	if rj == nil || rj.settled {
		return
	}
	rj.settled = true
	if err := rj.s.cfg.Jobs.Forget(rj.job); err != nil {
		rj.s.log.Error("forgetting an idempotent run that did not complete", keyTenant, rj.job.Tenant, "error", err)
	}
}
