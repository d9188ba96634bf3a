package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// outputsResp is the part of a run's answer about its output files.
type outputsResp struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Reason           string `json:"reason"`
	Template         string `json:"template"`
	OutputsTruncated bool   `json:"outputs_truncated"`
	Outputs          []struct {
		Pattern  string `json:"pattern"`
		Path     string `json:"path"`
		Size     *int64 `json:"size"`
		Mode     string `json:"mode"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
		Error    *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"outputs"`
}

// runOutputs posts body to /v1/run and decodes the 200 it must answer.
func (e *e2e) runOutputs(t *testing.T, body map[string]any) outputsResp {
	t.Helper()
	raw, _ := json.Marshal(body)
	status, answer := e.sendRaw(t, http.MethodPost, "/v1/run", raw)
	if status != http.StatusOK {
		t.Fatalf("HTTP %d %s", status, answer)
	}
	var r outputsResp
	if err := json.Unmarshal(answer, &r); err != nil {
		t.Fatalf("decoding %s: %v", answer, err)
	}
	return r
}

// A one-shot hands back the plot matplotlib drew, byte for byte, beside
// a file over the run's cap, a link out of the workspace and a pattern
// that matched nothing; each refusal says why.
func TestE2ERunOutputFiles(t *testing.T) {
	e := newE2E(t)
	code := `import hashlib, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
os.makedirs("out", exist_ok=True)
plt.plot([0, 1, 2, 3], [0, 1, 4, 9])
plt.savefig("out/plot.png")
open("out/big.png", "wb").write(os.urandom(300_000))
os.symlink("/etc/passwd", "out/passwd.png")
data = open("out/plot.png", "rb").read()
print(len(data), hashlib.sha256(data).hexdigest())
`
	r := e.runOutputs(t, map[string]any{"language": "python", "code": code, "max_output_bytes": 200_000,
		"outputs": []string{"out/*.png", "*.csv"}})
	if r.Reason != "ok" || r.Template != "python" {
		t.Fatalf("reason %q on %q, stderr %q", r.Reason, r.Template, r.Stderr)
	}
	var size int64
	var sum string
	if _, err := fmt.Sscan(r.Stdout, &size, &sum); err != nil {
		t.Fatalf("stdout %q: %v", r.Stdout, err)
	}
	t.Logf("matplotlib's plot: %d bytes", size)
	type entry struct{ pattern, path, code string }
	var got []entry
	for _, o := range r.Outputs {
		en := entry{o.Pattern, o.Path, ""}
		if o.Error != nil {
			en.code = o.Error.Code
			if o.Error.Message == "" || o.Content != "" {
				t.Errorf("%s: error %+v beside content %q", o.Path, o.Error, o.Content)
			}
		}
		got = append(got, en)
		switch o.Path {
		case "out/plot.png":
			content, err := base64.StdEncoding.DecodeString(o.Content)
			if err != nil || o.Encoding != "base64" {
				t.Fatalf("plot content (%s): %v", o.Encoding, err)
			}
			h := sha256.Sum256(content)
			if int64(len(content)) != size || hex.EncodeToString(h[:]) != sum || o.Size == nil || *o.Size != size {
				t.Errorf("plot: %d bytes, sha256 %x, size %v; the program wrote %d bytes, sha256 %s", len(content), h, o.Size, size, sum)
			}
			if !bytes.HasPrefix(content, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("plot starts %q, want a PNG", content[:min(len(content), 8)])
			}
			if o.Mode != "-rw-r--r--" {
				t.Errorf("plot mode %q", o.Mode)
			}
		case "out/big.png":
			if o.Size == nil || *o.Size != 300_000 || !strings.Contains(o.Error.Message, "200000 bytes (max_output_bytes)") {
				t.Errorf("big: size %v, error %+v", o.Size, o.Error)
			}
		}
	}
	want := []entry{
		{"out/*.png", "out/big.png", "too_large"},
		{"out/*.png", "out/passwd.png", "symlink"},
		{"out/*.png", "out/plot.png", ""},
		{"*.csv", "", "not_found"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outputs %v\nwant    %v", got, want)
	}
	if !r.OutputsTruncated {
		t.Error("outputs_truncated is false beside a file too large")
	}
	for _, w := range []string{"root:x:0:0", "/etc/passwd"} {
		if raw, _ := json.Marshal(r.Outputs); bytes.Contains(raw, []byte(w)) {
			t.Errorf("outputs repeat %q from outside the workspace", w)
		}
	}
}

// Past 100 entries the answer names the first file left out; files a
// program wrote before its timeout are handed back after it.
func TestE2ERunOutputCaps(t *testing.T) {
	e := newE2E(t)
	r := e.runOutputs(t, map[string]any{"language": "python", "outputs": []string{"many/*.txt"},
		"code": "import os\nos.makedirs('many')\nfor i in range(150):\n    open('many/%03d.txt' % i, 'w').write(str(i))\n"})
	if len(r.Outputs) != 101 || !r.OutputsTruncated {
		t.Fatalf("%d entries (truncated %v), want 101, truncated; stderr %q", len(r.Outputs), r.OutputsTruncated, r.Stderr)
	}
	first, last := r.Outputs[0], r.Outputs[100]
	if first.Path != "many/000.txt" || first.Content != base64.StdEncoding.EncodeToString([]byte("0")) {
		t.Errorf("first entry %+v", first)
	}
	if last.Path != "many/100.txt" || last.Error == nil || last.Error.Code != "too_many_files" || last.Content != "" {
		t.Errorf("entry 101 %+v, want too_many_files for many/100.txt", last)
	}

	r = e.runOutputs(t, map[string]any{"language": "python", "timeout_ms": 3000, "outputs": []string{"partial.txt"},
		"code": "open('partial.txt', 'w').write('so far')\nwhile True:\n    pass\n"})
	if r.Reason != "timeout" || len(r.Outputs) != 1 || r.Outputs[0].Content != base64.StdEncoding.EncodeToString([]byte("so far")) {
		t.Errorf("after a timeout: reason %q, outputs %+v", r.Reason, r.Outputs)
	}
	e.healthy(t)
}
