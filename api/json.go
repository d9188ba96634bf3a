package api

import (
	"bytes"
	"encoding/json"

	"github.com/gin-gonic/gin"
)

// writeJSON writes v as the response body. HTML characters are left as is:
// program output is data, not markup.
func writeJSON(c *gin.Context, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only unencodable types get here: a programming error.
		panic("api: encoding response: " + err.Error())
	}
	c.Data(status, "application/json; charset=utf-8", buf.Bytes())
}
