package core

import (
	"context"
	"unicode/utf8"

	"github.com/paddock-dev/paddock/runner"
)

// MaxIntrospectCode bounds the code of a Complete, Inspect or IsComplete
// call, in bytes.
const MaxIntrospectCode = 1 << 20

// Complete offers completions at cursorPos in code (a Jupyter
// complete_request) from the live interpreter of the caller's session id:
// names of its namespace, attributes, keywords, module names after
// "import". cursorPos counts Unicode code points, 0 to the code's length.
// It does not take the session's turn: it may come while a cell runs.
// Checks the "sessions" scope and the ranges, as Execute does. A kernel
// that cannot complete is KindNotImplemented.
func (s *Service) Complete(ctx context.Context, c Caller, id, code string, cursorPos int) (out runner.Completion, err error) {
	defer func() { s.metrics.done(c.Door, "complete", err) }()
	if err := s.introspectCheck(c, code, &cursorPos); err != nil {
		return out, err
	}
	out, err = s.kernels.Complete(ctx, c.Tenant, id, code, cursorPos)
	if err != nil {
		return runner.Completion{}, s.fail(err)
	}
	if out.Matches == nil {
		out.Matches = []string{}
	}
	return out, nil
}

// Inspect describes the object at, or called around, cursorPos in code (a
// Jupyter inspect_request) from the caller's session id. detailLevel is 0
// or 1 (1 adds the source). Found false means nothing was resolved; else
// Data has "text/plain". Checks as Complete does.
func (s *Service) Inspect(ctx context.Context, c Caller, id, code string, cursorPos, detailLevel int) (out runner.Inspection, err error) {
	defer func() { s.metrics.done(c.Door, "inspect", err) }()
	if err := s.introspectCheck(c, code, &cursorPos); err != nil {
		return out, err
	}
	if detailLevel != 0 && detailLevel != 1 {
		return out, invalid("invalid_request", "detail_level must be 0 or 1; got %d", detailLevel)
	}
	out, err = s.kernels.Inspect(ctx, c.Tenant, id, code, cursorPos, detailLevel)
	if err != nil {
		return runner.Inspection{}, s.fail(err)
	}
	return out, nil
}

// IsComplete says whether code is ready to run in the caller's session id
// (a Jupyter is_complete_request): runner.CodeComplete, CodeIncomplete
// (with the next line's Indent), CodeInvalid or CodeUnknown. Checks as
// Complete does.
func (s *Service) IsComplete(ctx context.Context, c Caller, id, code string) (out runner.Completeness, err error) {
	defer func() { s.metrics.done(c.Door, "is_complete", err) }()
	if err := s.introspectCheck(c, code, nil); err != nil {
		return out, err
	}
	out, err = s.kernels.IsComplete(ctx, c.Tenant, id, code)
	if err != nil {
		return runner.Completeness{}, s.fail(err)
	}
	return out, nil
}

// introspectCheck checks the caller's scope, the code's size and
// encoding, and the cursor, when there is one, against the code.
func (s *Service) introspectCheck(c Caller, code string, cursorPos *int) error {
	if err := s.sessionsFor(c); err != nil {
		return err
	}
	if len(code) > MaxIntrospectCode {
		return &Error{Kind: KindTooLarge, Code: "code_too_large",
			Message: "code must be at most 1048576 bytes for completion, inspection or a completeness check"}
	}
	if !utf8.ValidString(code) {
		return invalid("invalid_request", "code must be valid UTF-8")
	}
	if cursorPos != nil {
		if n := utf8.RuneCountInString(code); *cursorPos < 0 || *cursorPos > n {
			return invalid("invalid_request", "cursor_pos must be between 0 and %d (the code's length in characters); got %d", n, *cursorPos)
		}
	}
	return nil
}
