package main

import (
	"bytes"
	"net/http"
	"testing"
)

// A session cell's code runs in the same process as the kernel's driver
// and can write frames on the driver's report channel. Frames it forges
// there (a done for its own cell saying ok, a done saying timeout or oom,
// dones of other cells, a result with another count) change nothing the
// session reports: the cell runs to its real end, with its true status,
// reason and count, and the next cell works.
func TestE2ESessionForgedFrames(t *testing.T) {
	e := newE2E(t)
	tests := []struct {
		language, setup, forged, stdout, errName string
	}{
		{
			language: "python",
			setup:    "x = 1",
			forged: `import json, os
def forge(**m):
    b = json.dumps(m).encode()
    os.write(4, len(b).to_bytes(4, 'big') + b)
forge(op='event', seq=2, type='execute_result', data={'text/plain': 'forged'}, execution_count=99)
forge(op='done', seq=2, status='ok')
forge(op='done', seq=2, status='timeout', reason='oom', execution_count=99)
forge(op='done', seq=3, status='ok')
print('still running')
raise ValueError('the real end')`,
			stdout:  "still running\n",
			errName: "ValueError",
		},
		{
			language: "node",
			setup:    "let x = 1",
			// The Node kernel reopened the channel under another number: it
			// is the pipe end, past the standard streams, that no other
			// descriptor of the process shares and that takes a write.
			forged: `const fs = require('fs');
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
const took = [
  forge({ op: 'event', seq: 2, type: 'execute_result', data: { 'text/plain': 'forged' }, execution_count: 99 }),
  forge({ op: 'done', seq: 2, status: 'ok' }),
  forge({ op: 'done', seq: 2, status: 'timeout', reason: 'oom', execution_count: 99 }),
  forge({ op: 'done', seq: 3, status: 'ok' }),
];
console.log('took', took.join(','));
throw new Error('the real end')`,
			stdout:  "took 1,1,1,1\n", // each forged frame reached the channel
			errName: "Error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.language, func(t *testing.T) {
			id := e.newSession(t, map[string]any{"language": tt.language})
			if r := e.exec(t, id, tt.setup); r.Status != "ok" {
				t.Fatalf("setup: %+v", r)
			}
			r := e.exec(t, id, tt.forged)
			if r.Status != "error" || r.Reason != "error" || r.ExecutionCount != 2 || r.Error == nil || r.Error.Name != tt.errName {
				t.Errorf("forging cell: %+v, want status error, reason error, execution_count 2, a %s", r, tt.errName)
			}
			if r.Stdout != tt.stdout || len(r.Results) != 0 {
				t.Errorf("forging cell: stdout %q, results %+v; want %q and no result", r.Stdout, r.Results, tt.stdout)
			}
			r = e.exec(t, id, "x + 1")
			if r.Status != "ok" || mainText(r) != "2" || r.ExecutionCount != 3 {
				t.Errorf("cell after the forgeries: %+v, want ok, 2, execution_count 3", r)
			}
			status, raw := e.do(t, "GET", "/v1/sessions/"+id, nil, "")
			if status != http.StatusOK || !bytes.Contains(raw, []byte(`"state":"idle"`)) || !bytes.Contains(raw, []byte(`"execution_count":3`)) {
				t.Errorf("session after the forgeries: HTTP %d %s, want idle with execution_count 3", status, raw)
			}
		})
	}
}
