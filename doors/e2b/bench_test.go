package e2bdoor

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/runner"
)

// BenchmarkDoorCreateExecuteKill measures the door's own cost of an E2B
// create, one /execute and a kill, on the fake core (no sandbox): what
// the door adds to the same work on /v1.
func BenchmarkDoorCreateExecuteKill(b *testing.B) {
	td := newTestDoor(b, Config{})
	for b.Loop() {
		a := td.do("POST", "/v2/sandboxes", map[string]any{"templateID": "code-interpreter-v1"}, key("alice"))
		var sa sandboxAnswer
		_ = json.Unmarshal(a.body, &sa)
		if x := td.do("POST", "/execute", map[string]any{"code": "print(1)"}, interp(sa)); x.code != http.StatusOK {
			b.Fatalf("execute: %d", x.code)
		}
		td.do("DELETE", "/sandboxes/"+sa.SandboxID, nil, key("alice"))
	}
}

// BenchmarkCoreCreateExecuteClose is the same work called on the fake
// core directly, the baseline of the one above.
func BenchmarkCoreCreateExecuteClose(b *testing.B) {
	fc := newFakeCore()
	c := core.Caller{Tenant: "alice"}
	ctx := context.Background()
	for b.Loop() {
		s, _ := fc.CreateSession(ctx, c, core.SessionInput{Language: "python", TTL: DefaultTimeout})
		_, _ = fc.Execute(ctx, c, s.ID, core.ExecuteInput{Code: "print(1)"}, func(runner.Event) {})
		_ = fc.CloseSession(ctx, c, s.ID)
	}
}
