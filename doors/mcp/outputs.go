package mcpdoor

import (
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/runner"
)

// outputContent is a run's output files for a model: each entry without
// its content in the structured result, and each file returned as
// content, an image when its bytes are a PNG or a JPEG, else an embedded
// resource (text when it is UTF-8, a blob otherwise), and a line for each
// refusal.
func outputContent(outputs []runner.Output) ([]OutputOut, []mcp.Content) {
	var list []OutputOut
	var content []mcp.Content
	for _, o := range outputs {
		list = append(list, OutputOut{Pattern: o.Pattern, Path: o.Path, Size: o.Size, Error: string(o.Error), Message: o.Message})
		if o.Error != "" {
			name := o.Path
			if name == "" {
				name = o.Pattern
			}
			content = append(content, &mcp.TextContent{Text: "output " + name + ": " + string(o.Error) + ": " + o.Message})
			continue
		}
		mime := http.DetectContentType(o.Content)
		if slices.Contains(imageTypes, mime) {
			content = append(content, &mcp.ImageContent{Data: o.Content, MIMEType: mime})
			continue
		}
		res := &mcp.ResourceContents{URI: "file:///workspace/" + o.Path, MIMEType: mime}
		if utf8.Valid(o.Content) {
			res.Text = string(o.Content)
		} else {
			res.Blob = o.Content
		}
		content = append(content, &mcp.EmbeddedResource{Resource: res})
	}
	return list, content
}
