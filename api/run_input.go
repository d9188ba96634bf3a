package api

import (
	"time"

	"github.com/paddock-dev/paddock/core"
)

// limitsRequest is the "limits" object of a run or session request:
// resource limits in place of its template's. An absent (or null) field
// keeps the template's.
type limitsRequest struct {
	MemoryMB  *int64   `json:"memory_mb"`
	Processes *int64   `json:"processes"`
	CPUs      *float64 `json:"cpus"`
	DiskMB    *int64   `json:"disk_mb"`
	OpenFiles *int64   `json:"open_files"`
}

// toRunInput is req in the core's terms; the core checks it. A missing
// code is refused here (the core knows only empty code), after the
// language, as the core checks the language first.
func (s *server) toRunInput(req runRequest) (core.RunInput, error) {
	in := core.RunInput{
		Language:       req.Language,
		Template:       req.Template,
		Args:           req.Args,
		Env:            req.Env,
		Outputs:        req.Outputs,
		Timeout:        core.Scaled(req.TimeoutMS, time.Millisecond),
		MaxOutputBytes: req.MaxOutputBytes,
		Limits:         toLimits(req.Limits),
	}
	if req.Network != nil {
		in.Network = append([]string{}, req.Network.Allow...)
	}
	if req.Code == nil {
		if _, err := s.core.TemplateOf(req.Language, req.Template); err != nil {
			return in, err
		}
		return in, invalid("invalid_request", "code is required")
	}
	in.Code = *req.Code
	if req.Stdin != "" {
		in.Stdin = []byte(req.Stdin)
	}
	if len(req.Files) > 0 {
		in.Files = make([]core.File, len(req.Files))
		for i, f := range req.Files {
			in.Files[i] = core.File{Path: f.Path, Content: []byte(f.Content), Encoding: f.Encoding}
		}
	}
	return in, nil
}

// toLimits is a request's limits in the core's terms.
func toLimits(l *limitsRequest) core.Limits {
	if l == nil {
		return core.Limits{}
	}
	return core.Limits{MemoryMB: toInt(l.MemoryMB), Processes: toInt(l.Processes), CPUs: l.CPUs,
		DiskMB: toInt(l.DiskMB), OpenFiles: toInt(l.OpenFiles)}
}

func toInt(v *int64) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}
