package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// apiClient speaks the public REST API (/v1) and nothing else: it shares
// no code with the server.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

func newAPIClient(r remoteFlags) *apiClient {
	return &apiClient{base: strings.TrimRight(r.url, "/"), token: r.token, http: &http.Client{}}
}

// apiError is a request that got no usable answer; exit is the client's
// exit code for it.
type apiError struct {
	exit int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

// exitOf is the exit code for err: an apiError's own, else a protocol
// failure.
func exitOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.exit
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return exitProtocol
}

// do sends a request with body encoded as JSON (none when nil) and
// returns the response when its status is 2xx; any other status becomes
// an apiError carrying the server's {code, message}.
func (c *apiClient) do(ctx context.Context, method, path string, body any, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, &apiError{exitUsage, fmt.Sprintf("bad server URL %q: %v", c.base, err)}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &apiError{exitUnreachable, fmt.Sprintf("cannot reach %s: %v", c.base, err)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, statusError(method, path, resp)
}

// statusError describes a non-2xx answer.
func statusError(method, path string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct{ Code, Message string }
	what := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &body) == nil && body.Code != "" {
		what = body.Code + ": " + body.Message
	}
	exit := exitRefused
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		exit = exitAuth
	case resp.StatusCode >= 500:
		exit = exitServer
	}
	return &apiError{exit, fmt.Sprintf("%s %s: HTTP %d %s", method, path, resp.StatusCode, what)}
}

// getJSON fetches path and returns its raw body and, decoded, into v.
func (c *apiClient) getJSON(ctx context.Context, path string, v any) ([]byte, error) {
	return c.call(ctx, http.MethodGet, path, nil, v)
}

// call sends body, and decodes the answer into v (when not nil),
// returning its raw bytes as well.
func (c *apiClient) call(ctx context.Context, method, path string, body, v any) ([]byte, error) {
	resp, err := c.do(ctx, method, path, body, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &apiError{exitProtocol, fmt.Sprintf("%s %s: reading the answer: %v", method, path, err)}
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, &apiError{exitProtocol, fmt.Sprintf("%s %s: decoding the answer: %v", method, path, err)}
		}
	}
	return raw, nil
}

// ndjson is the media type of the streamed answers this client asks for.
const ndjson = "application/x-ndjson"

// streamEvent is one line of a streamed answer: its type and the whole
// line, for the caller to decode as that type.
type streamEvent struct {
	Type string `json:"type"`
	raw  []byte
}

// decode decodes the event's line into v.
func (e streamEvent) decode(v any) error {
	if err := json.Unmarshal(e.raw, v); err != nil {
		return &apiError{exitProtocol, fmt.Sprintf("decoding a %q event: %v", e.Type, err)}
	}
	return nil
}

// readEvents calls on for each NDJSON event of r until on sees the end
// event (and returns done) or fails. A stream that stops before its end
// event is a protocol error. Lines have no length cap: an event carries
// the run's whole answer, which may be large.
func readEvents(r io.Reader, on func(streamEvent) (done bool, err error)) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ev streamEvent
			if jerr := json.Unmarshal(line, &ev); jerr != nil || ev.Type == "" {
				return &apiError{exitProtocol, fmt.Sprintf("the stream carried a line that is not an event: %.80q", line)}
			}
			ev.raw = line
			done, oerr := on(ev)
			if oerr != nil || done {
				return oerr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return &apiError{exitProtocol, "the stream ended before its end event (the server or a proxy cut it short)"}
			}
			return err
		}
	}
}

// stream sends body and returns the NDJSON answer's body; a refusal (any
// non-2xx, which the server answers as plain JSON) becomes an apiError,
// and so does a 2xx that is not a stream (a server without streaming).
func (c *apiClient) stream(ctx context.Context, method, path string, body any) (io.ReadCloser, error) {
	resp, err := c.do(ctx, method, path, body, ndjson)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, ndjson) {
		resp.Body.Close()
		return nil, &apiError{exitProtocol, fmt.Sprintf("%s %s: asked for %s, got %q: is the server older than this client?", method, path, ndjson, ct)}
	}
	return resp.Body, nil
}
