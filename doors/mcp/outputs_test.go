package mcpdoor

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// run_code's output files reach a model as content: a PNG as an image,
// a text file as an embedded resource, a refusal as a line; the
// structured result lists them without their bytes.
func TestRunCodeOutputs(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	f := &fakeCore{run: func(c core.Caller, in core.RunInput) (core.RunResult, error) {
		if !slices.Equal(in.Outputs, []string{"out/*", "*.csv"}) {
			t.Errorf("outputs %q", in.Outputs)
		}
		return core.RunResult{Template: "python", Outcome: pool.Outcome{Result: runner.RunResult{Reason: runner.ReasonOK, Outputs: []runner.Output{
			{Pattern: "out/*", Path: "out/plot.png", Size: int64(len(png)), Content: png},
			{Pattern: "out/*", Path: "out/notes.txt", Size: 2, Content: []byte("hi")},
			{Pattern: "*.csv", Error: runner.OutputNotFound, Message: "no file matches the pattern"},
		}}}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "run_code", map[string]any{"language": "python", "code": "1", "outputs": []string{"out/*", "*.csv"}})
	if res.IsError || len(res.Content) != 3 {
		t.Fatalf("result %+v", res)
	}
	if img, ok := res.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, png) {
		t.Errorf("content[0] = %#v, want the PNG as an image", res.Content[0])
	}
	if r, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || r.Resource.URI != "file:///workspace/out/notes.txt" || r.Resource.Text != "hi" {
		t.Errorf("content[1] = %#v, want notes.txt as a text resource", res.Content[1])
	}
	if want := []string{"output *.csv: not_found: no file matches the pattern"}; !slices.Equal(texts(res), want) {
		t.Errorf("texts %q, want %q", texts(res), want)
	}
	got, _ := json.Marshal(res.StructuredContent)
	want := `"outputs":[{"path":"out/plot.png","pattern":"out/*","size":16},{"path":"out/notes.txt","pattern":"out/*","size":2},` +
		`{"error":"not_found","message":"no file matches the pattern","pattern":"*.csv"}]`
	if !bytes.Contains(got, []byte(want)) {
		t.Errorf("structured %s\nwant it to hold %s", got, want)
	}
}
