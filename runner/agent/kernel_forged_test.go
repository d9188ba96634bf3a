package agent

import (
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// forgePython defines forge(), which writes a frame on the driver's report
// channel (fd 4) as the driver would, from the cell's own code.
const forgePython = `import json, os
def forge(**m):
    b = json.dumps(m).encode()
    os.write(4, len(b).to_bytes(4, 'big') + b)
`

// forgeNode defines forge(), which writes a frame on the driver's report
// channel from the cell's own code. The kernel reopened the channel under
// another number; it is the one pipe end of the process, past the standard
// streams, whose pipe no other descriptor of it holds and that takes a
// write (the request channel is the other, read-only). forge returns how
// many descriptors took the frame.
const forgeNode = `const fs = require('fs');
function forge(m) {
  const body = Buffer.from(JSON.stringify(m));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  const links = {};
  for (const n of fs.readdirSync('/proc/self/fd')) {
    try { links[n] = fs.readlinkSync('/proc/self/fd/' + n); } catch (e) {}
  }
  const seen = {};
  for (const l of Object.values(links)) seen[l] = (seen[l] || 0) + 1;
  let took = 0;
  for (const [n, l] of Object.entries(links)) {
    if (Number(n) < 3 || !l.startsWith('pipe:') || seen[l] !== 1) continue;
    try { fs.writeSync(Number(n), Buffer.concat([head, body])); took++; } catch (e) {}
  }
  return took;
}
`

// The forged cells of TestKernelForgedFrames: the second (seq 2) and
// third (seq 3) cells of a kernel forge frames, then go on. A Node kernel
// keeps forge() from the second.
var forgedCells = map[string]struct{ raises, succeeds string }{
	LanguagePython: {
		raises: forgePython + `forge(op='event', seq=2, type='execute_result', data={'text/plain': 'forged'}, execution_count=99)
forge(op='done', seq=2, status='ok')
forge(op='done', seq=2, status='timeout', reason='oom', execution_count=99)
forge(op='done', seq=1, status='ok')
forge(op='done', seq=3, status='interrupted')
print('still running')
raise ValueError('the real end')`,
		succeeds: forgePython + `forge(op='done', seq=3, status='error', error={'name': 'Forged', 'value': '', 'traceback': []})
print('still running')
6 * 7`,
	},
	LanguageNode: {
		raises: forgeNode + `const took = [
  forge({ op: 'event', seq: 2, type: 'execute_result', data: { 'text/plain': 'forged' }, execution_count: 99 }),
  forge({ op: 'done', seq: 2, status: 'ok' }),
  forge({ op: 'done', seq: 2, status: 'timeout', reason: 'oom', execution_count: 99 }),
  forge({ op: 'done', seq: 1, status: 'ok' }),
  forge({ op: 'done', seq: 3, status: 'interrupted' }),
];
console.log('took', took.join(','));
throw new Error('the real end')`,
		succeeds: `console.log('took', forge({ op: 'done', seq: 3, status: 'error', error: { name: 'Forged', value: '', traceback: [] } }));
6 * 7`,
	},
}

// Frames the cell's code writes on the driver's report channel are not the
// cell's: its status, reason and count are what the agent saw, the cell
// runs to its real end, and the kernel goes on.
func TestKernelForgedFrames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		language   string
		setup      string
		raisesOut  string
		succeedOut string
		errName    string
	}{
		{language: LanguagePython, setup: "x = 1", raisesOut: "still running\n", succeedOut: "still running\n", errName: "ValueError"},
		{language: LanguageNode, setup: "let x = 1", raisesOut: "took 1,1,1,1,1\n", succeedOut: "took 1\n", errName: "Error"},
	}
	for _, tt := range tests {
		t.Run(tt.language, func(t *testing.T) {
			t.Parallel()
			k := startKernel(t, testConfig(t, tt.language), nil)
			k.execute(wire.Execute{Code: tt.setup}).mustDone(t, "ok", "ok")

			res := k.execute(wire.Execute{Code: forgedCells[tt.language].raises})
			res.mustDone(t, "error", "error")
			if res.done.ExecutionCount != 2 || res.done.Error == nil || res.done.Error.Name != tt.errName {
				t.Errorf("forging cell that raises: done %+v, want count 2 and a %s", res.done, tt.errName)
			}
			if got := res.text("stdout"); got != tt.raisesOut {
				t.Errorf("forging cell that raises: stdout %q, want %q", got, tt.raisesOut)
			}
			for _, ev := range res.rich() {
				if ev.Type == "execute_result" {
					t.Errorf("a forged result was forwarded: %+v", ev)
				}
			}

			res = k.execute(wire.Execute{Code: forgedCells[tt.language].succeeds})
			res.mustDone(t, "ok", "ok")
			if res.done.ExecutionCount != 3 || res.resultText() != "42" || res.text("stdout") != tt.succeedOut {
				t.Errorf("forging cell that succeeds: done %+v, result %q, stdout %q; want count 3, 42, %q",
					res.done, res.resultText(), res.text("stdout"), tt.succeedOut)
			}

			res = k.execute(wire.Execute{Code: "x + 1"})
			res.mustDone(t, "ok", "ok")
			if res.done.ExecutionCount != 4 || res.resultText() != "2" {
				t.Errorf("cell after the forgeries: done %+v, result %q, want count 4, 2", res.done, res.resultText())
			}
			if strings.Contains(k.log.String(), "kernel lost") {
				t.Errorf("the kernel was lost:\n%s", k.log)
			}
		})
	}
}

// "interrupted" means someone interrupted the cell: a cell that raises
// KeyboardInterrupt itself, unasked, ends in error.
func TestKernelSelfInterruptIsError(t *testing.T) {
	t.Parallel()
	k := startKernel(t, testConfig(t, LanguagePython), nil)
	res := k.execute(wire.Execute{Code: "raise KeyboardInterrupt"})
	res.mustDone(t, "error", "error")
	if res.done.Error == nil || res.done.Error.Name != "KeyboardInterrupt" || res.done.ExecutionCount != 1 {
		t.Errorf("done %+v, want a KeyboardInterrupt error, count 1", res.done)
	}
}
