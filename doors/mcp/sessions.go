package mcpdoor

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
)

// createSession is create_session: a session owned by the caller's tenant,
// closed when the MCP session that opened it ends.
func (d *door) createSession(ctx context.Context, req *mcp.CallToolRequest, in CreateSessionIn) (*mcp.CallToolResult, SessionOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[SessionOut](err)
	}
	s, err := d.core.CreateSession(ctx, c, core.SessionInput{
		Language: in.Language,
		Template: in.Template,
		TTL:      core.Scaled(int64(in.TTLSeconds), time.Second),
	})
	if err != nil {
		return failed[SessionOut](err)
	}
	d.owned.add(req.Session, s.ID, c)
	return nil, sessionOut(s), nil
}

func sessionOut(s core.Session) SessionOut {
	return SessionOut{
		SessionID: s.ID,
		Language:  s.Language,
		Template:  s.Template,
		ExpiresAt: s.ExpiresAt.UTC().Format(time.RFC3339),
	}
}

// closeSession is close_session.
func (d *door) closeSession(ctx context.Context, req *mcp.CallToolRequest, in CloseSessionIn) (*mcp.CallToolResult, CloseSessionOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[CloseSessionOut](err)
	}
	if err := d.core.CloseSession(ctx, c, in.SessionID); err != nil {
		return failed[CloseSessionOut](err)
	}
	d.owned.remove(req.Session, in.SessionID)
	return nil, CloseSessionOut{SessionID: in.SessionID, Closed: true}, nil
}

// execute is execute: one cell, its output as content a model can use.
func (d *door) execute(ctx context.Context, req *mcp.CallToolRequest, in ExecuteIn) (*mcp.CallToolResult, ExecuteOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[ExecuteOut](err)
	}
	var cell cellOutput
	x, err := d.core.Execute(ctx, c, in.SessionID, core.ExecuteInput{
		Code:    in.Code,
		Timeout: core.Scaled(int64(in.TimeoutMS), time.Millisecond),
	}, cell.add)
	if err != nil {
		return failed[ExecuteOut](err)
	}
	out, content := cell.result(x.ExecuteResult)
	out.SessionID = in.SessionID
	out.Resumed, out.ResumeMS = x.Wake.Resumed, ms(x.Wake.Took)
	if x.StateLost {
		out.StateLost, out.StateLostReason, out.KernelRestarted = true, x.LostReason, x.Restarted
		content = append(content, &mcp.TextContent{Text: stateLostText(x.LostReason, x.Restarted)})
	}
	return &mcp.CallToolResult{Content: content, IsError: out.Status != "ok" || x.StateLost}, out, nil
}

// stateLostText tells a model that the session's state is gone, why, and
// what it can do next.
func stateLostText(why string, restarted bool) string {
	if restarted {
		return "The session's state was lost: " + why + ". The kernel was restarted: the session goes on under the same " +
			"session_id, but its variables, imports and the files in /workspace are gone; redo what later cells need."
	}
	return "The session's state was lost: " + why + ". The session is lost; close it and create a new one."
}
