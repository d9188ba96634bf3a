package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// runRequest is the body of POST /v1/run.
type runRequest struct {
	Language       string            `json:"language"`
	Template       string            `json:"template"`
	Code           *string           `json:"code"`
	Files          []fileRequest     `json:"files"`
	Outputs        []string          `json:"outputs"`
	Stdin          string            `json:"stdin"`
	Args           []string          `json:"args"`
	Env            map[string]string `json:"env"`
	TimeoutMS      int64             `json:"timeout_ms"`
	MaxOutputBytes int64             `json:"max_output_bytes"`
	Limits         *limitsRequest    `json:"limits"`
	Network        *networkRequest   `json:"network"`
}

// networkRequest asks for a network: the hosts the run means to reach.
type networkRequest struct {
	Allow []string `json:"allow"`
}

// fileRequest is one file written into the sandbox before the run.
type fileRequest struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"` // "utf8" (default) or "base64"
}

// decodeRunRequest parses body as exactly one JSON object with only known
// fields, whatever the request's Content-Type.
func decodeRunRequest(body []byte) (runRequest, error) {
	var req runRequest
	return req, decodeJSON(body, &req)
}

// decodeJSON parses body into v (a pointer to a struct) as exactly one
// JSON object with only known fields, each key at most once per object.
func decodeJSON(body []byte, v any) error {
	if i := invalidUTF8At(body); i >= 0 {
		return invalid("invalid_utf8", "request body is not valid UTF-8 (bad byte at offset %d)", i)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if rest := strings.TrimLeft(string(body[dec.InputOffset():]), " \t\r\n"); rest != "" {
		return invalid("invalid_json", "unexpected data after the JSON object at offset %d", len(body)-len(rest))
	}
	return checkDuplicateKeys(body, reflect.TypeOf(v))
}

// jsonError turns a decoding error into a message that names the problem.
func jsonError(err error) error {
	var (
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.EOF):
		return invalid("invalid_json", "request body is empty; expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("invalid_json", "malformed JSON: unexpected end of input")
	case errors.As(err, &syntax):
		return invalid("invalid_json", "malformed JSON at offset %d: %s", syntax.Offset, syntax.Error())
	case errors.As(err, &wrongType):
		if wrongType.Field == "" {
			return invalid("invalid_json", "request body must be a JSON object, got %s", wrongType.Value)
		}
		if wrongType.Field == "env" && wrongType.Type.Kind() == reflect.String { // a value in the map
			return invalid("invalid_json", `values in "env" must be strings, got %s`, wrongType.Value)
		}
		return invalid("invalid_json", "field %q must be %s, got %s", wrongType.Field, jsonKind(wrongType.Type), wrongType.Value)
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return invalid("unknown_field", "unknown field %s", field)
	}
	return invalid("invalid_json", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return fmt.Sprintf("a %s", t)
}

// invalidUTF8At returns the offset of the first byte of b that is not valid
// UTF-8, or -1.
func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
