package gateway

import (
	"fmt"
	"net/http"
	"strings"
)

// The MCP door's session ids (Mcp-Session-Id) are the MCP SDK's, made
// on the node: the gateway hands them out as "<tag>.<id>", the node's
// tag (Tag: hex digits, no dot) before the first dot, and takes the
// prefix off on the way back in, so any gateway finds the node without
// keeping a table.
const mcpSessionHeader = "Mcp-Session-Id"

func (g *Gateway) mcp(w http.ResponseWriter, r *http.Request) {
	v := r.Header.Get(mcpSessionHeader)
	if v == "" {
		g.place(w, r, "")
		return
	}
	tag, id, ok := strings.Cut(v, ".")
	var n *nodeState
	for _, c := range g.t.nodes() {
		if Tag(c.Name) == tag {
			n = c
		}
	}
	if !ok || n == nil {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no node of this tier holds MCP session %q", v))
		return
	}
	if up, checked, _ := n.status(); checked && !up {
		writeError(w, http.StatusServiceUnavailable, "node_unavailable", lostMessage(n, "MCP session "+v))
		return
	}
	r.Header.Set(mcpSessionHeader, id)
	g.forward(w, r, &plan{nodes: []*nodeState{n}})
}
