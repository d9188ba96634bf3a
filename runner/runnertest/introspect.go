package runnertest

import (
	"context"
	"slices"
	"strings"

	"github.com/paddock-dev/paddock/runner"
)

var _ runner.Introspector = (*Kernel)(nil)

// Complete offers the variables whose names start with the word before
// cursorPos (ASCII code only), or answers with CompleteFunc.
func (k *Kernel) Complete(ctx context.Context, code string, cursorPos int) (runner.Completion, error) {
	if k.isLost() {
		return runner.Completion{}, k.lostErr()
	}
	if k.CompleteFunc != nil {
		return k.CompleteFunc(ctx, code, cursorPos)
	}
	cursorPos = min(max(cursorPos, 0), len(code))
	start := wordStart(code, cursorPos)
	prefix := code[start:cursorPos]
	matches := []string{}
	k.mu.Lock()
	for name := range k.vars {
		if strings.HasPrefix(name, prefix) {
			matches = append(matches, name)
		}
	}
	k.mu.Unlock()
	slices.Sort(matches)
	return runner.Completion{Matches: matches, CursorStart: start, CursorEnd: cursorPos}, nil
}

// Inspect finds the variable named by the word around cursorPos (ASCII
// code only): its value is the text/plain, or answers with InspectFunc.
func (k *Kernel) Inspect(ctx context.Context, code string, cursorPos, detailLevel int) (runner.Inspection, error) {
	if k.isLost() {
		return runner.Inspection{}, k.lostErr()
	}
	if k.InspectFunc != nil {
		return k.InspectFunc(ctx, code, cursorPos, detailLevel)
	}
	cursorPos = min(max(cursorPos, 0), len(code))
	end := cursorPos
	for end < len(code) && isName(code[end:end+1]) {
		end++
	}
	k.mu.Lock()
	v, ok := k.vars[code[wordStart(code, cursorPos):end]]
	k.mu.Unlock()
	if !ok {
		return runner.Inspection{Found: false}, nil
	}
	return runner.Inspection{Found: true, Data: map[string]any{"text/plain": v}, Metadata: map[string]any{}}, nil
}

// IsComplete says a cell ending in ":" is incomplete (indent four
// spaces), one with "!" invalid, any other complete; or answers with
// IsCompleteFunc.
func (k *Kernel) IsComplete(ctx context.Context, code string) (runner.Completeness, error) {
	if k.isLost() {
		return runner.Completeness{}, k.lostErr()
	}
	if k.IsCompleteFunc != nil {
		return k.IsCompleteFunc(ctx, code)
	}
	switch {
	case strings.Contains(code, "!"):
		return runner.Completeness{Status: runner.CodeInvalid}, nil
	case strings.HasSuffix(strings.TrimRight(code, " \n"), ":"):
		return runner.Completeness{Status: runner.CodeIncomplete, Indent: "    "}, nil
	}
	return runner.Completeness{Status: runner.CodeComplete}, nil
}

func wordStart(code string, pos int) int {
	start := min(max(pos, 0), len(code))
	for start > 0 && isName(code[start-1:start]) {
		start--
	}
	return start
}
