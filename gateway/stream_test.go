package gateway

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A node dying mid-stream: the client reads the events it sent, then an
// end event whose error names the node, not a bare cut.
func TestStreamBrokenByNodeEnds(t *testing.T) {
	for _, tt := range []struct{ contentType, event, want string }{
		{"text/event-stream", "event: stdout\ndata: {\"type\":\"stdout\",\"text\":\"started\"}\n\n", "event: end\ndata: {\"error\":{\"code\":\"node_lost\""},
		{"application/x-ndjson", "{\"type\":\"stdout\",\"text\":\"started\"}\n", "{\"error\":{\"code\":\"node_lost\""},
	} {
		t.Run(tt.contentType, func(t *testing.T) {
			a := newFakeNode(t, "a", 1, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType+"; charset=utf-8")
				fmt.Fprint(w, tt.event)
				w.(http.Flusher).Flush()
				c, buf, _ := w.(http.Hijacker).Hijack()
				buf.Flush()
				c.Close()
			})
			gw := newTestGateway(t, a)
			resp, err := http.Post(gw.URL+"/v1/sessions/"+Tag("a")+strings.Repeat("0", 24)+"/execute", "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var all strings.Builder
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
			}
			got := all.String()
			if !strings.HasPrefix(got, tt.event) || !strings.Contains(got, tt.want) || !strings.Contains(got, "node a failed") {
				t.Errorf("stream:\n%s\nwant %q then %q", got, tt.event, tt.want)
			}
		})
	}
}
