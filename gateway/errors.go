package gateway

import (
	"encoding/json"
	"net/http"
)

// writeError answers {code, message}, the shape of /v1's errors (and
// close enough to E2B's and Jupyter's that their SDKs show the message).
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": message})
}
