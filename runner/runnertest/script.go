package runnertest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// script is the default interpreter. Each line of the code is one
// statement:
//
//	print TEXT        stream "TEXT\n" on stdout
//	eprint TEXT       stream "TEXT\n" on stderr
//	display TEXT      display_data {"text/plain": TEXT}
//	raise NAME: VALUE the cell fails with that error
//	sleep DURATION    wait (time.ParseDuration), ended by Interrupt or timeout
//	die               the kernel is lost (runner.ErrKernelLost)
//	oom               the kernel is lost; the result says ReasonOOM
//	hang              ignore interrupts: at req.Timeout the kernel is killed,
//	                  as a real one is when a cell outlives its interrupt
//	                  (lost; the result says ReasonTimeout and Lost)
//	NAME = VALUE      set a variable (state survives until Restart)
//	env NAME          an expression: NAME from the cell's, else the kernel's env
//	input PROMPT      an expression: the answer of req.Input (nil: the cell
//	                  fails with StdinNotImplementedError; an error: EOFError)
//	password PROMPT   the same, as a password
//	update ID TEXT    update_display_data {"text/plain": TEXT} of display ID
//	clear             clear_output (clear wait: with Wait)
//	anything else     an expression: a variable's value, or the text itself
//
// When the last line is an expression its value is the execute_result
// {"text/plain": value}. Stream output past req.MaxOutput is cut and the
// cell ends with ReasonOutputLimit.
func (k *Kernel) script(ctx context.Context, n int, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
	emit := func(e runner.Event) {
		if events != nil {
			events(e)
		}
	}
	ok := runner.ExecuteResult{Status: runner.StatusOK, Reason: runner.ReasonOK}
	var written int64
	lines := strings.Split(req.Code, "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		verb, arg, _ := strings.Cut(line, " ")
		value, isExpr := "", false
		switch verb {
		case "":
			continue
		case "print", "eprint":
			stream := runner.Stdout
			if verb == "eprint" {
				stream = runner.Stderr
			}
			text := arg + "\n"
			if req.MaxOutput > 0 && written+int64(len(text)) > req.MaxOutput {
				if cut := req.MaxOutput - written; cut > 0 {
					emit(runner.Event{Type: runner.EventStream, Stream: stream, Text: text[:cut]})
				}
				return runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonOutputLimit}, nil
			}
			written += int64(len(text))
			emit(runner.Event{Type: runner.EventStream, Stream: stream, Text: text})
		case "display":
			emit(runner.Event{Type: runner.EventDisplayData, Data: map[string]any{"text/plain": arg}})
		case "raise":
			name, val, _ := strings.Cut(arg, ":")
			e := &runner.ExecError{Name: name, Value: strings.TrimSpace(val), Traceback: []string{"line " + strconv.Itoa(i+1), name + ": " + strings.TrimSpace(val)}}
			emit(runner.Event{Type: runner.EventError, Error: e})
			return runner.ExecuteResult{Status: runner.StatusError, Reason: runner.ReasonError, Error: e}, nil
		case "sleep":
			d, err := time.ParseDuration(arg)
			if err != nil {
				d = 0
			}
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return CellEnd(ctx)
			case <-t.C:
			}
		case "die":
			k.Lose()
			return runner.ExecuteResult{}, k.lostErr()
		case "oom":
			k.Lose()
			return runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonOOM, Lost: true}, nil
		case "hang":
			var killed <-chan time.Time
			if req.Timeout > 0 {
				t := time.NewTimer(req.Timeout)
				defer t.Stop()
				killed = t.C
			}
			select {
			case <-killed:
				k.Lose()
				return runner.ExecuteResult{Status: runner.StatusAborted, Reason: runner.ReasonTimeout, Lost: true}, nil
			case <-k.lost:
				return runner.ExecuteResult{}, k.lostErr()
			}
		case "env":
			value, isExpr = k.env(req, arg), true
		case "input", "password":
			v, e := readInput(ctx, req, runner.InputRequest{Prompt: arg, Password: verb == "password"})
			if e != nil {
				if ctx.Err() != nil {
					return CellEnd(ctx)
				}
				emit(runner.Event{Type: runner.EventError, Error: e})
				return runner.ExecuteResult{Status: runner.StatusError, Reason: runner.ReasonError, Error: e}, nil
			}
			value, isExpr = v, true
		case "update":
			id, text, _ := strings.Cut(arg, " ")
			emit(runner.Event{Type: runner.EventUpdateDisplayData, Data: map[string]any{"text/plain": text},
				Metadata: map[string]any{}, Transient: map[string]any{"display_id": id}})
		case "clear":
			emit(runner.Event{Type: runner.EventClearOutput, Wait: arg == "wait"})
		default:
			if name, val, ok := strings.Cut(line, "="); ok && isName(strings.TrimSpace(name)) {
				k.mu.Lock()
				k.vars[strings.TrimSpace(name)] = strings.TrimSpace(val)
				k.mu.Unlock()
				continue
			}
			k.mu.Lock()
			v, ok := k.vars[line]
			k.mu.Unlock()
			if !ok {
				v = line
			}
			value, isExpr = v, true
		}
		if err := ctx.Err(); err != nil {
			return CellEnd(ctx)
		}
		if isExpr && i == lastStatement(lines) {
			emit(runner.Event{Type: runner.EventExecuteResult, Data: map[string]any{"text/plain": value}, ExecutionCount: n})
		}
	}
	return ok, nil
}

// readInput asks req.Input for a line, as a kernel's input() does.
func readInput(ctx context.Context, req runner.ExecuteRequest, in runner.InputRequest) (string, *runner.ExecError) {
	if req.Input == nil {
		msg := "raw_input was called, but this frontend does not support input requests."
		return "", &runner.ExecError{Name: "StdinNotImplementedError", Value: msg, Traceback: []string{"StdinNotImplementedError: " + msg}}
	}
	v, err := req.Input(ctx, in)
	if err == nil && len(v) > runner.MaxInputBytes {
		err = fmt.Errorf("an input of %d bytes is over the limit of %d", len(v), runner.MaxInputBytes)
	}
	if err != nil {
		return "", &runner.ExecError{Name: "EOFError", Value: err.Error(), Traceback: []string{"EOFError: " + err.Error()}}
	}
	return v, nil
}

func (k *Kernel) env(req runner.ExecuteRequest, name string) string {
	if v, ok := req.Env[name]; ok {
		return v
	}
	return k.Options.Env[name]
}

// lastStatement is the index of the last non-blank line.
func lastStatement(lines []string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return i
		}
	}
	return -1
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
