package agent

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// resultText is the text/plain of the cell's execute_result, or "".
func (r cellResult) resultText() string {
	for _, ev := range r.events {
		if ev.Type == "execute_result" {
			s, _ := ev.Data["text/plain"].(string)
			return s
		}
	}
	return ""
}

func TestKernelInterrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		setup    string
		loop     string
		check    string
		want     string
	}{
		{name: "python busy loop", language: LanguagePython, setup: "x = 5", loop: "print('looping', flush=True)\nwhile True: pass", check: "x", want: "5"},
		{name: "python sleep", language: LanguagePython, setup: "x = 6", loop: "import time\nprint('sleeping')\ntime.sleep(60)", check: "x", want: "6"},
		{name: "node busy loop", language: LanguageNode, setup: "let x = 5", loop: "console.log('looping'); for (;;) {}", check: "x", want: "5"},
		{name: "node await", language: LanguageNode, setup: "const x = 6", loop: "console.log('waiting'); await new Promise(() => {})", check: "x", want: "6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")
			req := wire.Execute{Code: tt.loop}
			start := k.startCell(&req)
			// The loop announces itself: the cell runs when it is interrupted.
			if f := k.frame(); f.Type != wire.TypeEvent {
				t.Fatalf("frame %c %s, want the cell's output", f.Type, f.Payload)
			}
			id := k.nextID()
			k.send(wire.TypeInterrupt, wire.Request{ID: id})
			res := k.collect(req.ID, start)
			res.mustDone(t, "aborted", "interrupted")
			if a := k.waitAck(id); !reflect.DeepEqual(a, wire.Ack{ID: id}) {
				t.Errorf("interrupt ack %+v", a)
			}
			if got := k.execute(wire.Execute{Code: tt.check}).resultText(); got != tt.want {
				t.Errorf("after the interrupt: %q, want %q", got, tt.want)
			}
			// With no cell running an interrupt changes nothing.
			if a := k.simple(wire.TypeInterrupt); a.Error != "" {
				t.Errorf("idle interrupt: %+v", a)
			}
			if got := k.execute(wire.Execute{Code: tt.check}).resultText(); got != tt.want {
				t.Errorf("after an idle interrupt: %q, want %q", got, tt.want)
			}
		})
	}
}

// An interrupt sent right behind its cell, before the interpreter can
// have started it, still stops that cell. Python's driver is told which
// cell the interrupt is for, not only signalled: a signal that landed
// while the interpreter was still idle was lost, and the loop ran on to
// its timeout. Node's driver cannot read that message while a synchronous
// loop runs, and its watchdog drops a SIGINT that came before the script
// started, so the agent signals it again until the cell ends.
func TestKernelInterruptAtOnce(t *testing.T) {
	t.Parallel()
	for _, language := range []string{LanguagePython, LanguageNode} {
		t.Run(language, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, language), nil)
			loop := map[string]string{LanguagePython: "while True: pass", LanguageNode: "for (;;) {}"}[language]
			for i := range 5 {
				req := wire.Execute{Code: loop, TimeoutMS: 60_000}
				start := k.startCell(&req)
				id := k.nextID()
				k.send(wire.TypeInterrupt, wire.Request{ID: id})
				res := k.collect(req.ID, start)
				if res.done.Status != "aborted" || res.done.Reason != "interrupted" {
					t.Fatalf("cell %d: %s/%s, want aborted/interrupted", i, res.done.Status, res.done.Reason)
				}
				k.waitAck(id)
			}
			if got := k.execute(wire.Execute{Code: "1 + 1"}).resultText(); got != "2" {
				t.Errorf("after the interrupts: %q, want 2", got)
			}
		})
	}
}

func TestKernelTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		code     string
	}{
		{name: "python sleep", language: LanguagePython, code: "print('started', flush=True)\nimport time; time.sleep(60)"},
		{name: "python busy loop", language: LanguagePython, code: "print('started', flush=True)\nwhile True: pass"},
		{name: "node busy loop", language: LanguageNode, code: "console.log('started'); for (;;) {}"},
		{name: "node await", language: LanguageNode, code: "console.log('started'); await new Promise(r => setTimeout(r, 60000))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The agent's timer starts as it passes the cell on, and an
			// interrupt that comes before the cell's code runs is lost: the
			// interpreter is killed instead. A cell whose first output came
			// within its timeout ran before the timer fired; one that
			// started later proves nothing, and runs again with twice the
			// timeout, whatever the machine's speed.
			for timeout := 500 * time.Millisecond; ; timeout *= 2 {
				k := startKernel(t, testConfig(t, tt.language), nil)
				req := wire.Execute{Code: tt.code, TimeoutMS: timeout.Milliseconds()}
				res := k.collect(req.ID, k.startCell(&req))
				if (len(res.events) == 0 || res.first >= timeout) && timeout < time.Minute {
					t.Logf("first output after %v, timeout %v: the cell may have started late; trying again", res.first, timeout)
					continue
				}
				res.mustDone(t, "aborted", "timeout")
				if res.done.Lost {
					t.Errorf("done %+v says the interpreter died; the interrupt stopped the cell", res.done)
				}
				// The timer cannot fire sooner; the cells run a minute or
				// forever, so the upper bound is only a safety net.
				if res.elapsed < timeout || res.elapsed > 2*time.Minute {
					t.Errorf("timed out after %v, want after %v, well before the cell's own end", res.elapsed, timeout)
				}
				if got := k.execute(wire.Execute{Code: "1 + 1"}).resultText(); got != "2" {
					t.Errorf("after the timeout: %q, want 2", got)
				}
				return
			}
		})
	}
}

func TestKernelLost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		language    string
		setup       string // a cell that runs first, to its end
		code        string
		timeoutMS   int64
		wantReason  string
		wantSignal  int
		wantMessage string
		wantStdout  string // stream output before the end
		minElapsed  time.Duration
	}{
		{
			// SIGINT is ignored before the timed cell starts: its timeout
			// interrupt cannot come too early, however slow the machine.
			name:        "python ignores the interrupt",
			language:    LanguagePython,
			setup:       "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)",
			code:        "while True: pass",
			timeoutMS:   300,
			wantReason:  "timeout",
			wantSignal:  9,
			wantMessage: "the cell did not stop within 2000 ms of its timeout interrupt; the interpreter ended: killed by signal 9 (killed)",
			minElapsed:  2300 * time.Millisecond,
		},
		{
			name:        "python exits",
			language:    LanguagePython,
			code:        "import sys\nprint('bye')\nsys.exit(3)",
			wantReason:  "kernel_lost",
			wantMessage: "the interpreter ended: exit status 3",
			wantStdout:  "bye\n",
		},
		{
			name:        "python killed",
			language:    LanguagePython,
			code:        "import os\nos.kill(os.getpid(), 9)",
			wantReason:  "kernel_lost",
			wantSignal:  9,
			wantMessage: "the interpreter ended: killed by signal 9 (killed)",
		},
		{
			name:        "python breaks the channel",
			language:    LanguagePython,
			code:        "import os\nos.write(4, b'\\xff\\xff\\xff\\xff')",
			wantReason:  "kernel_lost",
			wantSignal:  9,
			wantMessage: "the interpreter broke the kernel's channel (driver protocol violation: frame of 4294967295 bytes); the interpreter ended: killed by signal 9 (killed)",
		},
		{
			name:        "node exits",
			language:    LanguageNode,
			code:        "console.log('bye'); process.exit(4)",
			wantReason:  "kernel_lost",
			wantMessage: "the interpreter ended: exit status 4",
			wantStdout:  "bye\n",
		},
		{
			// The first cell's callback runs as soon as that cell is over,
			// before node reads anything more, and blocks its only thread:
			// the timed cell is never read, SIGINT finds no script to stop
			// and the interrupt message is never read either, whenever the
			// timeout comes.
			name:        "node ignores the interrupt",
			language:    LanguageNode,
			setup:       "setImmediate(() => { for (;;) {} })",
			code:        "'never read'",
			timeoutMS:   300,
			wantReason:  "timeout",
			wantSignal:  9,
			wantMessage: "the cell did not stop within 2000 ms of its timeout interrupt; the interpreter ended: killed by signal 9 (killed)",
			minElapsed:  2300 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			if tt.setup != "" {
				k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")
			}
			res := k.execute(wire.Execute{Code: tt.code, TimeoutMS: tt.timeoutMS})
			res.mustDone(t, "aborted", tt.wantReason)
			if !res.done.Lost {
				t.Errorf("done %+v does not say the interpreter died with the cell", res.done)
			}
			// The agent kills no sooner than the timeout and the grace after
			// its interrupt; the Lost frame below says what happened.
			if res.elapsed < tt.minElapsed {
				t.Errorf("done after %v, want at least %v", res.elapsed, tt.minElapsed)
			}
			if got := res.text("stdout"); got != tt.wantStdout {
				t.Errorf("stdout %q, want %q", got, tt.wantStdout)
			}
			lost := k.waitLost()
			if want := (wire.Lost{Message: tt.wantMessage, Signal: tt.wantSignal}); lost != want {
				t.Errorf("lost %+v, want %+v", lost, want)
			}
			after := k.execute(wire.Execute{Code: "1"})
			after.mustDone(t, "aborted", "kernel_lost")
			if len(after.events) != 0 {
				t.Errorf("events after the loss: %+v", after.events)
			}
			// A restart brings the kernel back.
			if a := k.simple(wire.TypeRestart); a.Error != "" {
				t.Fatalf("restart: %+v", a)
			}
			if got := k.execute(wire.Execute{Code: "40 + 2"}); got.resultText() != "42" || got.done.ExecutionCount != 1 {
				t.Errorf("after the restart: %+v", got)
			}
		})
	}
}

func TestKernelRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		set      string
		get      string
		wantErr  string
	}{
		{name: "python", language: LanguagePython, set: "x = 1\nimport os\nos.environ['LATER'] = 'x'", get: "import os\nprint(os.environ.get('OPEN'), os.environ.get('LATER'))\nx", wantErr: "NameError"},
		{name: "node", language: LanguageNode, set: "const x = 1; process.env.LATER = 'x'", get: "console.log(process.env.OPEN, process.env.LATER); x", wantErr: "ReferenceError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), map[string]string{"OPEN": "kept"})
			k.execute(wire.Execute{Code: tt.set}).mustDone(t, "ok", "ok")
			k.execute(wire.Execute{Code: "2"}).mustDone(t, "ok", "ok")
			if a := k.simple(wire.TypeRestart); a.Error != "" {
				t.Fatalf("restart: %+v", a)
			}
			res := k.execute(wire.Execute{Code: tt.get})
			res.mustDone(t, "error", "error")
			if e := res.errorEvent(t); e.Name != tt.wantErr || res.done.ExecutionCount != 1 {
				t.Errorf("error %+v, count %d; want %s, 1", e, res.done.ExecutionCount, tt.wantErr)
			}
			if got := res.text("stdout"); !strings.HasPrefix(got, "kept ") || strings.Contains(got, " x") {
				t.Errorf("stdout %q, want the open environment only", got)
			}
		})
	}
}

func TestKernelRestartDuringCell(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	req := wire.Execute{Code: "print('running', flush=True)\nimport time\ntime.sleep(60)"}
	start := k.startCell(&req)
	if f := k.frame(); f.Type != wire.TypeEvent {
		t.Fatalf("frame %c %s, want the cell's output", f.Type, f.Payload)
	}
	id := k.nextID()
	k.send(wire.TypeRestart, wire.Request{ID: id})
	k.collect(req.ID, start).mustDone(t, "aborted", "interrupted")
	if a := k.waitAck(id); a.Error != "" {
		t.Fatalf("restart: %+v", a)
	}
	if len(k.losts) != 0 {
		t.Errorf("lost %+v after a restart", k.losts)
	}
	if got := k.execute(wire.Execute{Code: "'fresh'"}); got.resultText() != "'fresh'" || got.done.ExecutionCount != 1 {
		t.Errorf("after the restart: %+v", got)
	}
}

func TestKernelBusy(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	k := startKernel(t, cfg, nil)
	// The first cell runs until the test has its answer to the second.
	first := wire.Execute{Code: "print('started', flush=True)\nimport os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\n'first'"}
	start := k.startCell(&first)
	if f := k.frame(); f.Type != wire.TypeEvent {
		t.Fatalf("frame %c %s, want the cell's output", f.Type, f.Payload)
	}
	second := wire.Execute{Code: "'second'"}
	k.startCell(&second)
	busy := k.collect(second.ID, time.Now())
	wantErr := wire.ExecError{Name: "Busy", Value: "another cell is running", Traceback: []string{}}
	if len(busy.events) != 1 || busy.events[0].Type != "error" || busy.events[0].Error == nil || busy.events[0].Error.Name != wantErr.Name || busy.events[0].Error.Value != wantErr.Value {
		t.Errorf("busy events %+v, want one error %+v", busy.events, wantErr)
	}
	busy.mustDone(t, "aborted", "error")
	touch(t, cfg.Workdir, "go")
	res := k.collect(first.ID, start)
	res.mustDone(t, "ok", "ok")
	if res.resultText() != "'first'" || res.done.ExecutionCount != 1 {
		t.Errorf("first cell %+v", res)
	}
}

func TestKernelOutputLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		language   string
		code       string
		max        int64
		wantStdout string // events and raw output together
	}{
		{name: "python one write", language: LanguagePython, code: "print('A' * 10000)", max: 100, wantStdout: strings.Repeat("A", 100)},
		{name: "python flood", language: LanguagePython, code: "while True: print('B' * 99)", max: 1000, wantStdout: strings.Repeat(strings.Repeat("B", 99)+"\n", 10)},
		{name: "python child", language: LanguagePython, code: "import os\nos.system('yes C | head -c 100000')", max: 1000, wantStdout: strings.Repeat("C\n", 500)},
		{name: "node flood", language: LanguageNode, code: "for (;;) console.log('D'.repeat(99))", max: 1000, wantStdout: strings.Repeat(strings.Repeat("D", 99)+"\n", 10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			res := k.execute(wire.Execute{Code: tt.code, MaxOutput: tt.max})
			res.mustDone(t, "aborted", "output_limit")
			if got := res.text("stdout") + string(res.stdout); got != tt.wantStdout {
				t.Errorf("stdout %d bytes %.40q…, want %d bytes", len(got), got, len(tt.wantStdout))
			}
			if got := k.execute(wire.Execute{Code: "1 + 1"}).resultText(); got != "2" {
				t.Errorf("after the limit: %q, want 2", got)
			}
		})
	}
}

func TestKernelBadRequests(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	for _, req := range []wire.Execute{
		{Code: "1", TimeoutMS: -1},
		{Code: "1", MaxOutput: -1},
		{Code: "1", Env: map[string]string{"A=B": "c"}},
	} {
		req.ID = k.nextID()
		k.send(wire.TypeExecute, req)
		res := k.collect(req.ID, time.Now())
		res.mustDone(t, "aborted", "error")
		if e := res.errorEvent(t); e.Name != "BadRequest" || res.done.ExecutionCount != 0 {
			t.Errorf("%+v: error %+v, count %d", req, e, res.done.ExecutionCount)
		}
	}
	// A second open, a run, and a frame only the agent sends are refused.
	id := k.nextID()
	if a := k.call(wire.TypeKernel, id, wire.KernelOpen{ID: id}); !reflect.DeepEqual(a, wire.Ack{ID: id, Error: "kernel already open"}) {
		t.Errorf("second open: %+v", a)
	}
	for _, typ := range []wire.Type{wire.TypeRun, wire.TypeDone} {
		k.send(typ, struct{}{})
		f := k.frame()
		if f.Type != wire.TypeFail {
			t.Fatalf("%c: frame %c %s, want fail", typ, f.Type, f.Payload)
		}
	}
	// An undecodable request has no ID to answer.
	if err := k.w.Write(wire.TypeExecute, []byte("{")); err != nil {
		t.Fatal(err)
	}
	if f := k.frame(); f.Type != wire.TypeFail || !strings.Contains(string(f.Payload), `"bad_request":true`) {
		t.Errorf("frame %c %s, want a bad request fail", f.Type, f.Payload)
	}
	if got := k.execute(wire.Execute{Code: "'fine'"}); got.resultText() != "'fine'" || got.done.ExecutionCount != 1 {
		t.Errorf("after the refusals: %+v", got)
	}
}

func TestKernelOpenRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  bool // a run used the sandbox first
		env  map[string]string
		want wire.Ack
	}{
		{name: "after a run", run: true, want: wire.Ack{ID: 1, Error: "sandbox already used"}},
		{name: "bad environment", env: map[string]string{"": "x"}, want: wire.Ack{ID: 1, Error: `environment variable "": bad run request`, BadRequest: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, LanguagePython))
			c.hello()
			if tt.run {
				c.run(wire.Run{Code: "print(1)"}).mustExit(t)
			}
			k := &kernelClient{client: c, acks: map[uint64]wire.Ack{}}
			if a := k.call(wire.TypeKernel, 1, wire.KernelOpen{ID: 1, Env: tt.env}); !reflect.DeepEqual(a, tt.want) {
				t.Errorf("open: %+v, want %+v", a, tt.want)
			}
		})
	}
}

// An interpreter that dies between cells is reported lost at once.
func TestKernelLostWhileIdle(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguagePython)
	k := startKernel(t, cfg, nil)
	// The cell's thread ends the interpreter once the cell is over.
	res := k.execute(wire.Execute{Code: "import os, threading, time\ndef later():\n    while not os.path.exists('go'):\n        time.sleep(0.01)\n    os._exit(5)\nthreading.Thread(target=later).start()"})
	res.mustDone(t, "ok", "ok")
	touch(t, cfg.Workdir, "go")
	if lost := k.waitLost(); lost != (wire.Lost{Message: "the interpreter ended: exit status 5"}) {
		t.Errorf("lost %+v", lost)
	}
	k.execute(wire.Execute{Code: "1"}).mustDone(t, "aborted", "kernel_lost")
}

// A restarted interpreter runs the template's warm-up code again.
func TestKernelRestartWarmsUp(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, LanguageNode)
	cfg.Warmup = "globalThis.warmed = (globalThis.warmed || 0) + 1; console.log('warm-up output is dropped')"
	k := startKernel(t, cfg, nil)
	if got := k.execute(wire.Execute{Code: "warmed"}); got.resultText() != "1" || len(got.events) != 1 {
		t.Errorf("before the restart: %+v", got.events)
	}
	if a := k.simple(wire.TypeRestart); a.Error != "" {
		t.Fatalf("restart: %+v", a)
	}
	if got := k.execute(wire.Execute{Code: "warmed"}); got.resultText() != "1" || len(got.events) != 1 {
		t.Errorf("after the restart: %+v", got.events)
	}
}
