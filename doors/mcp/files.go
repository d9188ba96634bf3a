package mcpdoor

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeFile is write_file.
func (d *door) writeFile(ctx context.Context, req *mcp.CallToolRequest, in WriteFileIn) (*mcp.CallToolResult, FileOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[FileOut](err)
	}
	content, err := decode(in.Content, in.Encoding)
	if err != nil {
		return failed[FileOut](invalid(err.Error()))
	}
	if err := d.core.WriteFile(ctx, c, in.SessionID, in.Path, content); err != nil {
		return failed[FileOut](err)
	}
	return nil, FileOut{Path: in.Path, Size: len(content)}, nil
}

// readFile is read_file: text as text, PNG and JPEG as images, other
// bytes as base64.
func (d *door) readFile(ctx context.Context, req *mcp.CallToolRequest, in ReadFileIn) (*mcp.CallToolResult, ReadFileOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[ReadFileOut](err)
	}
	b, err := d.core.ReadFile(ctx, c, in.SessionID, in.Path, 0)
	if err != nil {
		return failed[ReadFileOut](err)
	}
	out := ReadFileOut{Path: in.Path, Size: len(b), Encoding: "utf8", Content: string(b)}
	if utf8.Valid(b) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Content}}}, out, nil
	}
	out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(b)
	var content mcp.Content = &mcp.TextContent{Text: fmt.Sprintf("binary file, %d bytes, base64:\n%s", len(b), out.Content)}
	switch t := http.DetectContentType(b); t {
	case "image/png", "image/jpeg":
		content = &mcp.ImageContent{Data: b, MIMEType: t}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{content}}, out, nil
}

// listFiles is list_files.
func (d *door) listFiles(ctx context.Context, req *mcp.CallToolRequest, in ListFilesIn) (*mcp.CallToolResult, ListFilesOut, error) {
	c, err := d.caller(req)
	if err != nil {
		return failed[ListFilesOut](err)
	}
	infos, err := d.core.ListFiles(ctx, c, in.SessionID, in.Path)
	if err != nil {
		return failed[ListFilesOut](err)
	}
	out := ListFilesOut{Path: in.Path, Entries: make([]Entry, 0, len(infos))}
	for _, f := range infos {
		out.Entries = append(out.Entries, Entry{Name: f.Name, Size: f.Size, IsDir: f.IsDir})
	}
	return nil, out, nil
}
