package agentconn

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// tail keeps the last bytes of the agent's diagnostic log, for errors.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) drain(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		t.mu.Lock()
		t.buf = append(t.buf, line...)
		if over := len(t.buf) - t.max; over > 0 {
			t.buf = t.buf[over:]
		}
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
