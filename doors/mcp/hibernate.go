package mcpdoor

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
)

// pauseSession is pause_session: the core hibernates the session now.
func (d *door) pauseSession(ctx context.Context, req *mcp.CallToolRequest, in SessionIDIn) (*mcp.CallToolResult, SessionStateOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[SessionStateOut](err)
	}
	s, err := d.core.PauseSession(ctx, c, in.SessionID)
	if err != nil {
		return failed[SessionStateOut](err)
	}
	return nil, stateOut(s), nil
}

// resumeSession is resume_session: the core wakes the session if it is
// hibernated, and says whether it was.
func (d *door) resumeSession(ctx context.Context, req *mcp.CallToolRequest, in SessionIDIn) (*mcp.CallToolResult, SessionStateOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[SessionStateOut](err)
	}
	s, w, err := d.core.ResumeSession(ctx, c, in.SessionID)
	if err != nil {
		return failed[SessionStateOut](err)
	}
	out := stateOut(s)
	out.Resumed, out.ResumeMS = w.Resumed, ms(w.Took)
	return nil, out, nil
}

// forkSession is fork_session: count new sessions from the session's
// exact state. They are this MCP session's, closed when it ends, as the
// sessions it creates are.
func (d *door) forkSession(ctx context.Context, req *mcp.CallToolRequest, in ForkSessionIn) (*mcp.CallToolResult, ForkSessionOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[ForkSessionOut](err)
	}
	children, err := d.core.ForkSession(ctx, c, in.SessionID, in.Count)
	if err != nil {
		return failed[ForkSessionOut](err)
	}
	out := ForkSessionOut{SessionID: in.SessionID, Sessions: make([]SessionOut, 0, len(children))}
	for _, s := range children {
		d.owned.add(req.Session, s.ID, c)
		out.Sessions = append(out.Sessions, sessionOut(s))
	}
	return nil, out, nil
}

func stateOut(s core.Session) SessionStateOut {
	return SessionStateOut{SessionID: s.ID, State: s.State, ExecutionCount: s.ExecutionCount, ImageBytes: s.ImageBytes}
}
