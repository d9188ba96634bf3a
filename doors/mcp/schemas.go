package mcpdoor

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Function-calling shapes of GET /v1/tools, chosen by ?format=.
const (
	formatOpenAI    = "openai"
	formatAnthropic = "anthropic"
	formatMCP       = "mcp"
)

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters"`
}

type anthropicTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema any    `json:"input_schema"`
}

type mcpTool struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema"`
}

// toolsFor renders the tools in a function-calling shape.
func (d *door) toolsFor(format string) ([]any, error) {
	var out []any
	for _, t := range d.tools {
		def := t.def
		switch format {
		case formatOpenAI:
			out = append(out, openAITool{Type: "function", Function: openAIFunction{Name: def.Name, Description: def.Description, Parameters: def.InputSchema}})
		case formatAnthropic:
			out = append(out, anthropicTool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema})
		case formatMCP:
			out = append(out, mcpTool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema, OutputSchema: def.OutputSchema})
		default:
			return nil, fmt.Errorf("format %q is not openai, anthropic or mcp", format)
		}
	}
	return out, nil
}

// schemas is GET /v1/tools: {"format", "tools"}, the tools in the shape
// ?format= names (openai, the default; anthropic; mcp).
func (d *door) schemas(c *gin.Context) {
	format := c.DefaultQuery("format", formatOpenAI)
	tools, err := d.toolsFor(format)
	if err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"code": "invalid_request", "message": err.Error()})
		return
	}
	c.JSON(http.StatusOK, gin.H{"format": format, "tools": tools})
}
