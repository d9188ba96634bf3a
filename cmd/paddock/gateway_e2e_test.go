package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The node tags of n1, n2 and n3: the first 8 hex digits of
// `echo -n paddock-node:<name> | sha256sum`.
var testNodeTags = map[string]string{"n1": "d5529766", "n2": "8fd3b076", "n3": "1a310ef6"}

// tierClient calls a tier's processes with one token.
type tierClient struct {
	t     *testing.T
	token string
}

type tierAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a tierAnswer) String() string { return fmt.Sprintf("HTTP %d %s", a.status, a.body) }

func (c tierClient) do(method, url string, body any, header ...string) tierAnswer {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return tierAnswer{status: resp.StatusCode, header: resp.Header, body: b}
}

// must is do for an answer that must be status, decoded into out.
func (c tierClient) must(status int, method, url string, body, out any, header ...string) tierAnswer {
	c.t.Helper()
	a := c.do(method, url, body, header...)
	if a.status != status {
		c.t.Fatalf("%s %s: %s, want %d", method, url, a, status)
	}
	if out != nil {
		if err := json.Unmarshal(a.body, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, url, err, a.body)
		}
	}
	return a
}

// cell runs code in session id through base and returns its main
// result's text/plain.
func (c tierClient) cell(base, id, code string) string {
	c.t.Helper()
	var r execResp
	c.must(http.StatusOK, "POST", base+"/v1/sessions/"+id+"/execute", map[string]any{"code": code, "timeout_ms": 30000}, &r)
	for _, res := range r.Results {
		if res.Main {
			s, _ := res.Data["text/plain"].(string)
			return s
		}
	}
	if r.Error != nil {
		c.t.Errorf("cell %q in %s: %s: %s", code, id, r.Error.Name, r.Error.Value)
	}
	return ""
}

// startedCell streams the cell body in session id through base and
// returns the stream once the cell has printed "started".
func (c tierClient) startedCell(ctx context.Context, base, id string, body []byte) *bufio.Scanner {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/sessions/"+id+"/execute", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("streamed cell: HTTP %d %s", resp.StatusCode, b)
	}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.Contains(lines.Text(), "started") {
	}
	return lines
}

// lastEvent reads a stream to its end and returns its last event that is
// not a keepalive.
func lastEvent(lines *bufio.Scanner) string {
	var last string
	for lines.Scan() {
		if l := strings.TrimSpace(lines.Text()); l != "" && !strings.Contains(l, `"keepalive"`) {
			last = l
		}
	}
	return last
}

// in is c for subtest t.
func (c tierClient) in(t *testing.T) tierClient {
	c.t = t
	return c
}

// TestE2EGatewayTier is issue 30's multi-node test on real gVisor: three
// node processes (own state dirs, one python sandbox each) and two
// gateways on loopback, all with the same JWT key and node credential.
func TestE2EGatewayTier(t *testing.T) {
	runscPath, _, _ := lifecycleEnv(t)
	bin := serverBinary(t)
	dir := t.TempDir()
	jwtSecret, nodeSecret := filepath.Join(dir, "jwt"), filepath.Join(dir, "node")
	for path, s := range map[string]string{jwtSecret: strings.Repeat("jwt-secret-of-the-tier-", 3), nodeSecret: strings.Repeat("node-credential-", 3)} {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	shared := []string{"--node-credential-file=" + nodeSecret, "--jwt-hs256-secret-file=" + jwtSecret}
	nodes := map[string]*paddockProc{}
	nodeFlags := func(name string) []string {
		return append([]string{"--role=node", "--node-name=" + name,
			"--templates=python", "--pool-size=1", "--pool-max=1", "--session-kernels=0"}, shared...)
	}
	var list []string
	for _, name := range []string{"n1", "n2", "n3"} {
		nodes[name] = startServer(t, bin, newStateDir(t, runscPath), nodeFlags(name)...)
		list = append(list, name+"="+nodes[name].url)
	}
	gateway := func() *paddockProc {
		return startServer(t, bin, t.TempDir(), append([]string{"--role=gateway", "--nodes=" + strings.Join(list, ",")}, shared...)...)
	}
	gwA, gwB := gateway(), gateway()
	top := t // a process a subtest starts for the rest of the test is stopped with it
	c := tierClient{t: t, token: mintToken(t, jwtSecret, "alice")}
	run := map[string]any{"language": "python", "code": "print(6 * 7)"}

	t.Run("a node refuses what no gateway signed", func(t *testing.T) {
		c := c.in(t)
		for _, forged := range []string{"", "v1 1700000000 - 00"} {
			a := c.do("POST", nodes["n1"].url+"/v1/run", run, "X-Paddock-Gateway", forged)
			if a.status != http.StatusUnauthorized || !strings.Contains(string(a.body), "gateway_credential_required") ||
				!strings.Contains(string(a.body), "gateway") {
				t.Errorf("credential %q: %s, want 401 gateway_credential_required", forged, a)
			}
		}
	})

	t.Run("the gateway authenticates callers", func(t *testing.T) {
		if a := (tierClient{t: t}).do("POST", gwA.url+"/v1/run", run); a.status != http.StatusUnauthorized {
			t.Errorf("no token: %s", a)
		}
		if a := (tierClient{t: t, token: "not.a.jwt"}).do("POST", gwA.url+"/v1/run", run); a.status != http.StatusUnauthorized ||
			!strings.Contains(string(a.body), "invalid_token") {
			t.Errorf("bad token: %s", a)
		}
	})

	t.Run("runs spread over the nodes", func(t *testing.T) {
		c := c.in(t)
		seen := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := c.do("POST", gwA.url+"/v1/run", map[string]any{"language": "python", "code": "import time; time.sleep(1); print(6 * 7)"})
				var r runResp
				_ = json.Unmarshal(a.body, &r)
				if a.status != http.StatusOK || r.Stdout != "42\n" {
					t.Errorf("run: %s", a)
				}
				mu.Lock()
				seen[a.header.Get("X-Paddock-Node")]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		delete(seen, "")
		if len(seen) < 2 {
			t.Errorf("6 concurrent runs went to %v, want at least 2 nodes", seen)
		}
	})

	// Three sessions at once, once every node has its sandbox back, so
	// that they land on more than one node.
	awaitTierReady(t, gwA.url, 3)
	type created struct{ id, node string }
	var sessions []created
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s struct {
				ID string `json:"id"`
			}
			a := c.must(http.StatusCreated, "POST", gwA.url+"/v1/sessions", map[string]any{"template": "python"}, &s)
			mu.Lock()
			sessions = append(sessions, created{s.ID, a.header.Get("X-Paddock-Node")})
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, s := range sessions {
		if tag := testNodeTags[s.node]; tag == "" || !strings.HasPrefix(s.id, tag) || len(s.id) != 32 {
			t.Fatalf("session %s on node %q does not carry its node's tag %q", s.id, s.node, tag)
		}
	}
	doomed, kept := sessions[0], created{}
	for _, s := range sessions[1:] {
		if s.node != doomed.node {
			kept = s
		}
	}
	if kept.id == "" {
		t.Fatalf("3 concurrent sessions all went to %s", doomed.node)
	}

	t.Run("a session made through one gateway is used through the other", func(t *testing.T) {
		c := c.in(t)
		c.cell(gwA.url, doomed.id, "x = 41")
		if got := c.cell(gwB.url, doomed.id, "x + 1"); got != "42" {
			t.Errorf("x + 1 through gateway B = %q, want 42", got)
		}
		c.cell(gwB.url, kept.id, "y = 'kept'")
		var list struct {
			Sessions []struct {
				ID string `json:"id"`
			} `json:"sessions"`
		}
		c.must(http.StatusOK, "GET", gwB.url+"/v1/sessions", nil, &list)
		if len(list.Sessions) != 3 {
			t.Errorf("GET /v1/sessions through a gateway lists %d sessions, want the 3 of every node", len(list.Sessions))
		}
	})

	t.Run("GraphQL and metrics span the nodes", func(t *testing.T) {
		c := c.in(t)
		var q struct {
			Data struct {
				Sessions []struct {
					ID string `json:"id"`
				} `json:"sessions"`
			} `json:"data"`
		}
		c.must(http.StatusOK, "POST", gwA.url+"/v1/graphql", map[string]any{"query": "{ sessions { id } }"}, &q)
		if len(q.Data.Sessions) != 3 {
			t.Errorf("GraphQL sessions through a gateway: %d, want the 3 of every node", len(q.Data.Sessions))
		}
		var one struct {
			Data struct {
				Session struct {
					ID string `json:"id"`
				} `json:"session"`
			} `json:"data"`
		}
		c.must(http.StatusOK, "POST", gwB.url+"/v1/graphql", map[string]any{"query": `query($id: ID!) { session(id: $id) { id } }`,
			"variables": map[string]any{"id": kept.id}}, &one)
		if one.Data.Session.ID != kept.id {
			t.Errorf("GraphQL session(id) through a gateway: %q, want %s", one.Data.Session.ID, kept.id)
		}
		var tok bytes.Buffer
		if err := tokenCmd([]string{"--subject=ops", "--scopes=admin", "--jwt-hs256-secret-file=" + jwtSecret}, &tok); err != nil {
			t.Fatal(err)
		}
		m := tierClient{t: t, token: strings.TrimSpace(tok.String())}.must(http.StatusOK, "GET", gwA.url+"/metrics", nil, nil)
		for _, n := range []string{"n1", "n2", "n3"} {
			if !strings.Contains(string(m.body), `node="`+n+`"`) {
				t.Errorf("/metrics through a gateway has no sample of %s", n)
			}
		}
	})

	t.Run("a Jupyter kernel and its WebSocket through both gateways", func(t *testing.T) {
		c := c.in(t)
		var k struct {
			ID string `json:"id"`
		}
		a := c.must(http.StatusCreated, "POST", gwA.url+"/api/kernels", map[string]any{"name": "python3"}, &k)
		node := a.header.Get("X-Paddock-Node")
		if len(k.ID) != 36 || !strings.HasPrefix(k.ID, testNodeTags[node]) {
			t.Fatalf("kernel id %q on %s: want a UUID beginning with %s", k.ID, node, testNodeTags[node])
		}
		c.must(http.StatusOK, "GET", gwB.url+"/api/kernels/"+k.ID, nil, nil)
		if got := jupyterEval(t, gwB.url, c.token, k.ID, "6 * 7"); got != "42" {
			t.Errorf("6 * 7 over gateway B's WebSocket = %q", got)
		}
		c.must(http.StatusNoContent, "DELETE", gwA.url+"/api/kernels/"+k.ID, nil, nil)
	})

	t.Run("an E2B sandbox through both gateways", func(t *testing.T) {
		e := tierClient{t: t}
		var sb struct {
			SandboxID       string `json:"sandboxID"`
			EnvdAccessToken string `json:"envdAccessToken"`
		}
		e.must(http.StatusCreated, "POST", gwA.url+"/sandboxes", map[string]any{"templateID": "python"}, &sb, "X-API-KEY", c.token)
		a := e.must(http.StatusOK, "POST", gwB.url+"/execute", map[string]any{"code": "1 + 1"}, nil,
			"E2b-Sandbox-Id", sb.SandboxID, "E2b-Sandbox-Port", "49999", "X-Access-Token", sb.EnvdAccessToken)
		if !strings.Contains(string(a.body), `"text":"2"`) {
			t.Errorf("1 + 1 in sandbox %s through gateway B: %s", sb.SandboxID, a.body)
		}
		e.must(http.StatusNoContent, "DELETE", gwB.url+"/sandboxes/"+sb.SandboxID, nil, nil, "X-API-KEY", c.token)
	})

	t.Run("restarting a gateway loses nothing", func(t *testing.T) {
		c := c.in(t)
		key := []string{"Idempotency-Key", "tier-key-1"}
		var first runResp
		c.must(http.StatusOK, "POST", gwA.url+"/v1/run", map[string]any{"language": "python", "code": "import random; print(random.random())"}, &first, key...)
		stop(t, gwA, syscall.SIGTERM)
		gwA = gateway()
		if got := c.cell(gwA.url, kept.id, "y"); got != "'kept'" {
			t.Errorf("y through the new gateway = %q", got)
		}
		var again runResp
		a := c.must(http.StatusOK, "POST", gwA.url+"/v1/run", map[string]any{"language": "python", "code": "import random; print(random.random())"}, &again, key...)
		if a.header.Get("Idempotent-Replayed") != "true" || again.Stdout != first.Stdout {
			t.Errorf("the keyed run again through the new gateway: replayed %q, %q after %q", a.header.Get("Idempotent-Replayed"), again.Stdout, first.Stdout)
		}
	})

	t.Run("an MCP session across both gateways", func(t *testing.T) {
		// Every other request of the one MCP session goes to the other
		// gateway: its Mcp-Session-Id names the node for both.
		var mu sync.Mutex
		var n int
		var sessionIDs []string
		alternate := roundTripper(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			base := []*paddockProc{gwA, gwB}[n%2]
			n++
			mu.Unlock()
			r = r.Clone(r.Context())
			r.URL.Host = strings.TrimPrefix(base.url, "http://")
			r.Header.Set("Authorization", "Bearer "+c.token)
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
				mu.Lock()
				sessionIDs = append(sessionIDs, resp.Header.Get("Mcp-Session-Id"))
				mu.Unlock()
			}
			return resp, err
		})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: gwA.url + "/mcp", HTTPClient: &http.Client{Transport: alternate}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"language": "python"}})
		if err != nil || res.IsError {
			t.Fatalf("create_session: %v %+v", err, res)
		}
		id := res.StructuredContent.(map[string]any)["session_id"].(string)
		for _, code := range []string{"x = 7", "x * 6"} {
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "execute", Arguments: map[string]any{"session_id": id, "code": code}})
			if err != nil || res.IsError {
				t.Fatalf("execute %q: %v %+v", code, err, res)
			}
		}
		if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), "42") {
			t.Errorf("x * 6 over MCP through both gateways: %s", b)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(sessionIDs) == 0 || n < 4 {
			t.Fatalf("%d requests, Mcp-Session-Id %v", n, sessionIDs)
		}
		// The MCP session id begins with its node's tag, as the node's
		// session ids do.
		tag, _, _ := strings.Cut(sessionIDs[0], ".")
		if !slices.Contains(slices.Collect(maps.Values(testNodeTags)), tag) || !strings.HasPrefix(id, tag) {
			t.Errorf("MCP session %s opened session %s, not on the node its tag %q names", sessionIDs[0], id, tag)
		}
	})

	t.Run("a node drained", func(t *testing.T) {
		// SIGTERM, as Kubernetes drains a node's pod: its cell in flight
		// finishes, new work goes to the other nodes meanwhile, and its
		// sessions, hibernated as it stops, are served again when it
		// comes back with its state directory at the same address.
		c := c.in(t)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		b, _ := json.Marshal(map[string]any{"code": "print('started', flush=True)\nimport time\ntime.sleep(20)\nz = 'drained'\nz", "timeout_ms": 60000})
		lines := c.startedCell(ctx, gwA.url, kept.id, b)
		drained := nodes[kept.node]
		if err := drained.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// Once the gateway has seen it draining (a run sent before the
		// signal landed may still go there, and run), runs succeed
		// elsewhere while it finishes the cell.
		awaitNodeDown(t, gwB.url, kept.node)
		for i := range 3 {
			var r runResp
			a := c.must(http.StatusOK, "POST", gwB.url+"/v1/run", run, &r)
			if r.Stdout != "42\n" || a.header.Get("X-Paddock-Node") == kept.node {
				t.Errorf("run %d while %s drains: %q on %s", i, kept.node, r.Stdout, a.header.Get("X-Paddock-Node"))
			}
		}
		last := lastEvent(lines)
		var end struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Error  *struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(last), &end); err != nil || end.Type != "end" || end.Error != nil {
			t.Errorf("the cell in flight as %s drained ended with %q, want its end with no error", kept.node, last)
		}
		if err := drained.wait(2 * time.Minute); err != nil {
			t.Fatalf("%s after SIGTERM: %v", kept.node, err)
		}
		if !strings.Contains(drained.logs.String(), `msg="saved the open sessions for the next server" hibernated=1 lost=0`) {
			t.Errorf("%s's log does not say it hibernated its sessions:\n%s", kept.node, drained.logs.String())
		}
		nodes[kept.node] = startServerAt(top, bin, drained.state, strings.TrimPrefix(drained.url, "http://"), nodeFlags(kept.node)...)
		awaitTierReady(t, gwA.url, 3)
		if got := c.cell(gwB.url, kept.id, "y, z"); got != "('kept', 'drained')" {
			t.Errorf("the drained node's session after its restart: y, z = %q, want ('kept', 'drained')", got)
		}
	})

	t.Run("a node killed mid-run", func(t *testing.T) {
		c := c.in(t)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		b, _ := json.Marshal(map[string]any{"code": "print('started', flush=True)\nimport time\ntime.sleep(120)", "timeout_ms": 60000})
		lines := c.startedCell(ctx, gwB.url, doomed.id, b)

		// A one-shot run on the same node, found by its idempotency key: a
		// run the node refuses before claiming the key (a timeout_ms out of
		// range) names the node the key goes to, on every gateway.
		key := ""
		for i := range 40 {
			k := fmt.Sprintf("doomed-probe-%d", i)
			a := c.do("POST", gwA.url+"/v1/run", map[string]any{"language": "python", "code": "1", "timeout_ms": 999999}, "Idempotency-Key", k)
			if a.status != http.StatusBadRequest {
				t.Fatalf("probe %s: %s, want 400", k, a)
			}
			if a.header.Get("X-Paddock-Node") == doomed.node {
				key = k
				break
			}
		}
		if key == "" {
			t.Fatalf("no probe key of 40 goes to %s", doomed.node)
		}
		// The same keyed run through both gateways at once: whichever reaches
		// the node first holds the key and runs, the other is told 409
		// in_progress. Which one wins is the machine's business, so the test
		// waits for the 409 before killing the node and then expects the
		// holder's 502 node_lost.
		long := map[string]any{"language": "python", "code": "import time; time.sleep(120)", "timeout_ms": 60000}
		lb, _ := json.Marshal(long)
		send := func(gw string) tierAnswer {
			for {
				req, _ := http.NewRequestWithContext(ctx, "POST", gw+"/v1/run", bytes.NewReader(lb))
				req.Header.Set("Authorization", "Bearer "+c.token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return tierAnswer{status: -1, body: []byte(err.Error())}
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				a := tierAnswer{status: resp.StatusCode, header: resp.Header, body: b}
				if a.status != http.StatusServiceUnavailable && a.status != http.StatusTooManyRequests {
					return a
				}
				select {
				case <-ctx.Done():
					return a
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		answers := make(chan tierAnswer, 2)
		for _, gw := range []string{gwA.url, gwB.url} {
			go func() { answers <- send(gw) }()
		}
		select {
		case a := <-answers:
			if a.status != http.StatusConflict || !strings.Contains(string(a.body), "in_progress") {
				t.Fatalf("the keyed run sent twice at once: the first answer is %s, want 409 in_progress", a)
			}
		case <-ctx.Done():
			t.Fatal("neither of the keyed runs sent at once answered in 2 minutes")
		}
		stop(t, nodes[doomed.node], syscall.SIGKILL)
		select {
		case a := <-answers:
			if a.status != http.StatusBadGateway || !strings.Contains(string(a.body), "node_lost") || !strings.Contains(string(a.body), doomed.node) {
				t.Errorf("the one-shot run in flight on the killed node: %s, want 502 node_lost naming %s", a, doomed.node)
			}
		case <-ctx.Done():
			t.Fatal("the one-shot run on the killed node got no answer in 2 minutes")
		}
		last := lastEvent(lines)
		var end struct {
			Type  string `json:"type"`
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(last), &end); err != nil || end.Type != "end" || end.Error.Code != "node_lost" ||
			!strings.Contains(end.Error.Message, doomed.node) {
			t.Errorf("the cell's stream ended with %q, want an end event with error node_lost naming %s", last, doomed.node)
		}
		for _, gw := range []*paddockProc{gwA, gwB} {
			a := c.do("POST", gw.url+"/v1/sessions/"+doomed.id+"/execute", map[string]any{"code": "x"})
			if a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), "node_unavailable") ||
				!strings.Contains(string(a.body), doomed.node) || !strings.Contains(string(a.body), doomed.id) {
				t.Errorf("the lost node's session through %s: %s, want 503 node_unavailable naming node and session", gw.url, a)
			}
		}
		for i := range 4 {
			gw := []*paddockProc{gwA, gwB}[i%2]
			var r runResp
			a := c.must(http.StatusOK, "POST", gw.url+"/v1/run", run, &r)
			if r.Stdout != "42\n" || a.header.Get("X-Paddock-Node") == doomed.node {
				t.Errorf("run %d after the kill: %q on %s", i, r.Stdout, a.header.Get("X-Paddock-Node"))
			}
		}
		if got := c.cell(gwB.url, kept.id, "y"); got != "'kept'" {
			t.Errorf("the other node's session after the kill: y = %q", got)
		}
	})
}

// awaitNodeDown waits until the gateway at base lists node as down.
func awaitNodeDown(t *testing.T, base, node string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var r struct {
			Nodes []struct {
				Name string `json:"name"`
				Up   bool   `json:"up"`
			} `json:"nodes"`
		}
		code, b := sendTo(t, "GET", base+"/readyz", nil)
		if code != 0 && json.Unmarshal(b, &r) == nil {
			for _, nd := range r.Nodes {
				if nd.Name == node && !nd.Up {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway still counts %s up after 2 minutes: %s", node, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitTierReady waits until the gateway at base sees n nodes up, each
// with a python sandbox ready.
func awaitTierReady(t *testing.T, base string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var r struct {
			Nodes []struct {
				Up    bool           `json:"up"`
				Ready map[string]int `json:"ready"`
			} `json:"nodes"`
		}
		code, b := sendTo(t, "GET", base+"/readyz", nil)
		ready := 0
		if code == http.StatusOK && json.Unmarshal(b, &r) == nil {
			for _, nd := range r.Nodes {
				if nd.Up && nd.Ready["python"] > 0 {
					ready++
				}
			}
		}
		if ready >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tier is not ready after 2 minutes: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jupyterEval runs code on kernel id over the kernel WebSocket at base
// (legacy JSON framing) and returns its execute_result's text/plain.
func jupyterEval(t *testing.T, base, token, id, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/api/kernels/"+id+"/channels?token="+token, nil)
	if err != nil {
		t.Fatalf("dialing the kernel WebSocket: %v", err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	msg, _ := json.Marshal(map[string]any{
		"channel":       "shell",
		"header":        map[string]any{"msg_id": "m1", "msg_type": "execute_request", "session": "s1", "username": "", "version": "5.3", "date": time.Now().UTC().Format(time.RFC3339)},
		"parent_header": map[string]any{}, "metadata": map[string]any{},
		"content": map[string]any{"code": code, "silent": false, "store_history": true, "user_expressions": map[string]any{}, "allow_stdin": false},
	})
	if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("reading the kernel WebSocket: %v", err)
		}
		var m struct {
			Header struct {
				MsgType string `json:"msg_type"`
			} `json:"header"`
			Parent struct {
				MsgID string `json:"msg_id"`
			} `json:"parent_header"`
			Content struct {
				Data map[string]any `json:"data"`
			} `json:"content"`
		}
		if json.Unmarshal(b, &m) == nil && m.Parent.MsgID == "m1" && m.Header.MsgType == "execute_result" {
			s, _ := m.Content.Data["text/plain"].(string)
			return s
		}
	}
}
