package mcpdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BridgeOptions configure Bridge.
type BridgeOptions struct {
	// URL is the running Paddock's MCP endpoint, e.g.
	// http://127.0.0.1:8080/mcp.
	URL string
	// Token is the bearer JWT sent with every request; empty sends none
	// (a Paddock with auth off).
	Token string
	// In and Out are the host's side: newline-delimited JSON-RPC, as on
	// stdio.
	In  io.ReadCloser
	Out io.WriteCloser
	// Client makes the HTTP requests; nil is a client without a timeout
	// (a cell may run for as long as the server allows).
	Client *http.Client
}

// Bridge relays MCP messages between a host speaking stdio (In, Out) and
// a running Paddock's Streamable HTTP endpoint, until In ends or ctx is
// done; then it ends the remote MCP session, which closes the Paddock
// sessions it opened. A request the endpoint refuses (a bad token, an
// unreachable server) is answered to the host with a JSON-RPC error
// saying why.
func Bridge(ctx context.Context, o BridgeOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := o.Client
	if client == nil {
		client = &http.Client{}
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{token: o.Token, base: base}
	hc := *client
	hc.Transport = t
	client = &hc
	local, err := (&mcp.IOTransport{Reader: o.In, Writer: o.Out}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("opening stdio: %w", err)
	}
	defer local.Close()
	remote, err := (&mcp.StreamableClientTransport{Endpoint: o.URL, HTTPClient: client}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", o.URL, err)
	}

	var writeMu sync.Mutex // local.Write is called from both directions
	toLocal := func(msg jsonrpc.Message) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		return local.Write(ctx, msg)
	}
	go func() {
		for {
			msg, err := remote.Read(ctx)
			if err != nil {
				return
			}
			if toLocal(msg) != nil {
				cancel()
				return
			}
		}
	}()
	var readErr error
	for {
		msg, err := local.Read(ctx)
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				readErr = fmt.Errorf("reading from the host: %w", err)
			}
			break
		}
		if err := remote.Write(ctx, msg); err != nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				msg := fmt.Sprintf("paddock at %s: %v", o.URL, err)
				if why := t.refusal(); why != "" {
					msg += " (" + why + ")"
				}
				_ = toLocal(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}})
			}
		}
	}
	// Closing the remote end sends DELETE: the server ends the MCP session
	// and closes the sessions it opened. A session that never opened has
	// nothing to end, so its error says nothing.
	_ = remote.Close()
	return readErr
}

// transport adds the bearer token to every request and remembers why the
// last request was refused, for the host to see.
type transport struct {
	token string
	base  http.RoundTripper

	mu   sync.Mutex
	last string
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	// Keep the refusal's message and hand the body on unread.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	why := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		why = e.Error.Message
	}
	t.mu.Lock()
	t.last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, why)
	t.mu.Unlock()
	return resp, nil
}

// refusal is the last refusal's status and message, then forgets it.
func (t *transport) refusal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.last
	t.last = ""
	return s
}
