package mcpdoor

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/internal/edge"
)

// Tool names.
const (
	toolRunCode       = "run_code"
	toolCreateSession = "create_session"
	toolExecute       = "execute"
	toolWriteFile     = "write_file"
	toolReadFile      = "read_file"
	toolListFiles     = "list_files"
	toolCloseSession  = "close_session"
	toolPauseSession  = "pause_session"
	toolResumeSession = "resume_session"
	toolForkSession   = "fork_session"
)

// tool is one tool's definition (name, description, input and output
// schemas) and how to add it, with its handler, to a server.
type tool struct {
	def *mcp.Tool
	add func(*mcp.Server)
}

// newTool defines a tool whose schemas are generated from In and Out.
// langs and names, when not empty, become the enums of In's "language"
// and "template" properties.
func newTool[In, Out any](name, desc string, langs, names []string, h mcp.ToolHandlerFor[In, Out]) (tool, error) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		return tool{}, fmt.Errorf("input schema of %s: %w", name, err)
	}
	for prop, values := range map[string][]string{"language": langs, "template": names} {
		if p := in.Properties[prop]; p != nil {
			for _, v := range values {
				p.Enum = append(p.Enum, v)
			}
		}
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		return tool{}, fmt.Errorf("output schema of %s: %w", name, err)
	}
	def := &mcp.Tool{Name: name, Description: desc, InputSchema: in, OutputSchema: out}
	return tool{def: def, add: func(s *mcp.Server) { mcp.AddTool(s, def, h) }}, nil
}

// newTools defines every tool for the given templates, served by d.
func newTools(d *door, tmpls []core.TemplateInfo) ([]tool, error) {
	env := "\n\n" + environment(tmpls)
	langs, names := languages(tmpls), templateNames(tmpls)
	var tools []tool
	for _, mk := range []func() (tool, error){
		func() (tool, error) { return newTool(toolRunCode, descRunCode+env, langs, names, d.runCode) },
		func() (tool, error) {
			return newTool(toolCreateSession, descCreateSession+env, langs, names, d.createSession)
		},
		func() (tool, error) { return newTool(toolExecute, descExecute, nil, nil, d.execute) },
		func() (tool, error) { return newTool(toolWriteFile, descWriteFile, nil, nil, d.writeFile) },
		func() (tool, error) { return newTool(toolReadFile, descReadFile, nil, nil, d.readFile) },
		func() (tool, error) { return newTool(toolListFiles, descListFiles, nil, nil, d.listFiles) },
		func() (tool, error) { return newTool(toolCloseSession, descClose, nil, nil, d.closeSession) },
		func() (tool, error) { return newTool(toolPauseSession, descPause, nil, nil, d.pauseSession) },
		func() (tool, error) { return newTool(toolResumeSession, descResume, nil, nil, d.resumeSession) },
		func() (tool, error) { return newTool(toolForkSession, descFork, nil, nil, d.forkSession) },
	} {
		t, err := mk()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// caller is who sent req: the core.Caller the HTTP door authenticated,
// carried in the request's token info. Without one, the anonymous caller
// when auth is off; an error when it is on, so that nothing runs
// unauthenticated.
func (d *door) caller(req *mcp.CallToolRequest) (core.Caller, error) {
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil {
		if c, ok := req.Extra.TokenInfo.Extra[callerKey].(core.Caller); ok {
			return c, nil
		}
	}
	if d.core.AuthEnabled() {
		return core.Caller{}, &core.Error{Kind: core.KindUnauthenticated, Code: "unauthenticated", Message: "no authenticated caller"}
	}
	return core.Caller{Door: Door}, nil
}

// callerKey is the key of the core.Caller in a request's token info.
const callerKey = "paddock.caller"

// Door names this door in the core's metrics and logs.
const Door = edge.MCP

// failed turns a core error into a tool error: an error result whose text
// a model can act on (the core's code and message), not a protocol error.
func failed[Out any](err error) (*mcp.CallToolResult, Out, error) {
	var zero Out
	e := core.Classify(err)
	return nil, zero, fmt.Errorf("%s: %s", e.Code, e.Message)
}
