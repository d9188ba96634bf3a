package jupyterdoor

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestTokenOf(t *testing.T) {
	cases := []struct {
		name, header, url, want string
		ok                      bool
	}{
		{"jupyter scheme", "token abc", "/api/kernels", "abc", true},
		{"bearer", "Bearer abc", "/api/kernels", "abc", true},
		{"scheme case", "TOKEN abc", "/api/kernels", "abc", true},
		{"query", "", "/api/kernels/x/channels?token=abc", "abc", true},
		{"header wins", "token h", "/api?token=q", "h", true},
		{"basic refused", "Basic abc", "/api", "", false},
		{"empty token", "token ", "/api", "", false},
		{"none", "", "/api", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gc, _ := gin.CreateTestContext(httptest.NewRecorder())
			gc.Request = httptest.NewRequest("GET", c.url, nil)
			if c.header != "" {
				gc.Request.Header.Set("Authorization", c.header)
			}
			got, err := tokenOf(gc)
			if got != c.want || (err == nil) != c.ok {
				t.Fatalf("tokenOf = %q, %v; want %q, ok %v", got, err, c.want, c.ok)
			}
		})
	}
}
