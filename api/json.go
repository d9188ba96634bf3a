package api

import (
	"bytes"
	"encoding/json"

	"github.com/gin-gonic/gin"
)

const jsonContentType = "application/json; charset=utf-8"

// writeJSON writes v as the response body.
func writeJSON(c *gin.Context, status int, v any) {
	c.Data(status, jsonContentType, encodeJSON(v))
}

// encodeJSON is v as a response body. HTML characters are left as is:
// program output is data, not markup.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only unencodable types get here: a programming error.
		panic("api: encoding response: " + err.Error())
	}
	return buf.Bytes()
}
