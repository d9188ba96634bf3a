package api

// createSessionRequest is the body of POST /v1/sessions.
type createSessionRequest struct {
	Language string            `json:"language"`
	Template string            `json:"template"`
	TTLS     int64             `json:"ttl_s"`
	Env      map[string]string `json:"env"`
	Limits   *limitsRequest    `json:"limits"`
	Network  *networkRequest   `json:"network"`
}

// executeRequest is the body of POST /v1/sessions/{id}/execute.
type executeRequest struct {
	Code      *string           `json:"code"`
	TimeoutMS int64             `json:"timeout_ms"`
	Env       map[string]string `json:"env"`
	Queue     bool              `json:"queue"`
}
