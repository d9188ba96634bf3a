package rootfs

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
)

func TestWriteStubDeb(t *testing.T) {
	var buf bytes.Buffer
	if err := writeStubDeb(&buf, "python3-pythran"); err != nil {
		t.Fatalf("writeStubDeb: %v", err)
	}
	data := buf.Bytes()
	wantStart := "!<arch>\ndebian-binary   0           0     0     100644  4         `\n2.0\n" +
		"control.tar.gz  0           0     0     100644  "
	if !bytes.HasPrefix(data, []byte(wantStart)) {
		t.Errorf("archive starts %q, want %q", data[:min(len(data), len(wantStart))], wantStart)
	}
	if !bytes.Contains(data, []byte("\ndata.tar.gz     0           0     0     100644  ")) {
		t.Errorf("archive has no data.tar.gz member")
	}
}

// TestStubDebReadByDpkg checks the stub with the tool that will install it.
func TestStubDebReadByDpkg(t *testing.T) {
	dpkgDeb := prereq.Command(t, "dpkg-deb", "dpkg")
	dir := t.TempDir()
	if err := writeStubDebs(dir, []string{"unicode-data"}); err != nil {
		t.Fatalf("writeStubDebs: %v", err)
	}
	deb := filepath.Join(dir, "unicode-data_stub_all.deb")
	out, err := exec.CommandContext(t.Context(), dpkgDeb, "--field", deb, "Package", "Version", "Architecture").CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --field: %v\n%s", err, out)
	}
	want := "Package: unicode-data\nVersion: 999:0+paddock.stub1\nArchitecture: all\n"
	if string(out) != want {
		t.Errorf("fields =\n%s\nwant\n%s", out, want)
	}
	out, err = exec.CommandContext(t.Context(), dpkgDeb, "--contents", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --contents: %v\n%s", err, out)
	}
	if want := "drwxr-xr-x root/root         0 1970-01-01 00:00 ./\n"; string(out) != want {
		t.Errorf("contents =\n%q\nwant\n%q", out, want)
	}
}
