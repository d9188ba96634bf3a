package rootfs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"time"
)

// stubVersion is the version of every stub package. Its high epoch
// satisfies any ">=" dependency on the real package.
const stubVersion = "999:0+paddock.stub1"

// stubControl is the control file of an empty package called pkg.
func stubControl(pkg string) string {
	return "Package: " + pkg + "\n" +
		"Version: " + stubVersion + "\n" +
		"Architecture: all\n" +
		"Maintainer: Paddock <paddock@localhost>\n" +
		"Priority: optional\n" +
		"Section: misc\n" +
		"Description: empty stand-in for " + pkg + "\n" +
		" Paddock installs this package instead of " + pkg + ", which other\n" +
		" packages depend on but which their users do not need at run time.\n"
}

// writeStubDebs writes an empty Debian package for each name into dir, at
// stubDebPath.
func writeStubDebs(dir string, names []string) error {
	for _, name := range names {
		path := stubDebPath(dir, name)
		var buf bytes.Buffer
		if err := writeStubDeb(&buf, name); err != nil {
			return fmt.Errorf("building stub package %s: %w", name, err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing stub package %s: %w", name, err)
		}
	}
	return nil
}

// writeStubDeb writes the .deb of an empty package: an ar archive of
// debian-binary, control.tar.gz and an empty data.tar.gz.
func writeStubDeb(w io.Writer, pkg string) error {
	control, err := tarGz(tarFile{"control", stubControl(pkg)})
	if err != nil {
		return err
	}
	data, err := tarGz()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "!<arch>\n"); err != nil {
		return err
	}
	members := []struct {
		name string
		body []byte
	}{
		{"debian-binary", []byte("2.0\n")},
		{"control.tar.gz", control},
		{"data.tar.gz", data},
	}
	for _, m := range members {
		if err := writeArMember(w, m.name, m.body); err != nil {
			return err
		}
	}
	return nil
}

// writeArMember writes one member of a common-format ar archive.
func writeArMember(w io.Writer, name string, body []byte) error {
	header := fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, 0, 0, 0, "100644", len(body))
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if len(body)%2 == 1 {
		_, err := w.Write([]byte{'\n'})
		return err
	}
	return nil
}

// tarFile is a regular file in a tar archive.
type tarFile struct{ name, content string }

// tarGz is a gzipped tar of "./" and the given regular files, all owned by
// root, with a fixed timestamp.
func tarGz(files ...tarFile) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755, ModTime: epoch, Uname: "root", Gname: "root", Format: tar.FormatGNU}); err != nil {
		return nil, err
	}
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: "./" + f.name, Mode: 0o644, Size: int64(len(f.content)), ModTime: epoch, Uname: "root", Gname: "root", Format: tar.FormatGNU}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, f.content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
