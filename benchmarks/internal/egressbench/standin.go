package egressbench

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxStandin is the largest answer the stand-in gives.
const maxStandin = 1 << 30

// standin answers GET /bytes/N with N bytes, Content-Length set, written
// from one buffer; anything else is 404.
func standin() *http.Server {
	chunk := make([]byte, 1<<20)
	return &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/bytes/"), 10, 64)
		if err != nil || n < 0 || n > maxStandin || !strings.HasPrefix(r.URL.Path, "/bytes/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.Header().Set("Content-Type", "application/octet-stream")
		for n > 0 {
			k := min(n, int64(len(chunk)))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	})}
}
