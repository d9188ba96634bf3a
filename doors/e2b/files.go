package e2bdoor

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// maxUploadParts bounds the files of one multipart upload.
const maxUploadParts = 100

// writtenFile is envd's answer for each file written.
type writtenFile struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// readFile is envd's GET /files?path=: the file's bytes from the main
// context's workspace.
func (d *door) readFile(c *gin.Context) {
	rel, err := workspacePath(c.Query("path"))
	if err == nil && rel == "." {
		err = invalid("path names the home directory, not a file")
	}
	if err != nil {
		fail(c, err)
		return
	}
	sb := sandboxOf(c)
	data, err := d.core.ReadFile(c.Request.Context(), sb.owner, sb.id, rel, d.cfg.MaxFileBytes)
	if err != nil {
		fail(c, err)
		return
	}
	d.touch(sb, sb.id)
	c.Data(http.StatusOK, "application/octet-stream", data)
}

// writeFile is envd's POST /files: a multipart body whose "file" parts
// are named by ?path= (one part) or by their file names, or an
// octet-stream body written to ?path=. The whole body is bounded by
// MaxFileBytes.
func (d *door) writeFile(c *gin.Context) {
	if enc := c.GetHeader("Content-Encoding"); enc != "" && enc != "identity" {
		fail(c, invalid("Content-Encoding "+enc+" is not supported: send the file uncompressed"))
		return
	}
	sb := sandboxOf(c)
	body := http.MaxBytesReader(c.Writer, c.Request.Body, d.cfg.MaxFileBytes+64<<10)
	mt, params, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	var files []pendingFile
	var err error
	switch mt {
	case "multipart/form-data":
		files, err = d.multipartFiles(body, params["boundary"], c.Query("path"))
	case "application/octet-stream":
		files, err = d.octetFile(body, c.Query("path"))
	default:
		err = invalid(fmt.Sprintf("content type %q: send multipart/form-data or application/octet-stream", mt))
	}
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]writtenFile, 0, len(files))
	for _, f := range files {
		if err := d.core.WriteFile(c.Request.Context(), sb.owner, sb.id, f.rel, f.content); err != nil {
			fail(c, err)
			return
		}
		out = append(out, writtenFile{Path: e2bPath(f.rel), Name: path.Base(f.rel), Type: "file"})
	}
	d.touch(sb, sb.id)
	c.JSON(http.StatusOK, out)
}

type pendingFile struct {
	rel     string
	content []byte
}

func (d *door) octetFile(body io.Reader, p string) ([]pendingFile, error) {
	rel, err := filePath(p)
	if err != nil {
		return nil, err
	}
	content, err := d.readBounded(body)
	if err != nil {
		return nil, err
	}
	return []pendingFile{{rel, content}}, nil
}

func (d *door) multipartFiles(body io.Reader, boundary, p string) ([]pendingFile, error) {
	if boundary == "" {
		return nil, invalid("multipart body without a boundary")
	}
	mr := multipart.NewReader(body, boundary)
	var files []pendingFile
	total := int64(0)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, tooLargeOr(err, d.cfg.MaxFileBytes, "reading the multipart body")
		}
		if part.FormName() != "file" {
			continue
		}
		if len(files) == maxUploadParts {
			return nil, invalid(fmt.Sprintf("at most %d files per upload", maxUploadParts))
		}
		target := part.FileName()
		if p != "" {
			if len(files) > 0 {
				return nil, invalid("?path= names one file: send several files without it, each named by its part's file name")
			}
			target = p
		}
		rel, err := filePath(target)
		if err != nil {
			return nil, err
		}
		content, err := d.readBounded(part)
		if err != nil {
			return nil, err
		}
		total += int64(len(content))
		if total > d.cfg.MaxFileBytes {
			return nil, tooLarge(d.cfg.MaxFileBytes)
		}
		files = append(files, pendingFile{rel, content})
	}
	if len(files) == 0 {
		return nil, invalid("the multipart body has no \"file\" part")
	}
	return files, nil
}

// filePath maps an upload's path, which must name a file.
func filePath(p string) (string, error) {
	rel, err := workspacePath(p)
	if err == nil && (rel == "." || strings.HasSuffix(p, "/")) {
		err = invalid(fmt.Sprintf("path %q names a directory, not a file", p))
	}
	return rel, err
}

func (d *door) readBounded(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, d.cfg.MaxFileBytes+1))
	if err != nil {
		return nil, tooLargeOr(err, d.cfg.MaxFileBytes, "reading the upload")
	}
	if int64(len(b)) > d.cfg.MaxFileBytes {
		return nil, tooLarge(d.cfg.MaxFileBytes)
	}
	return b, nil
}

func tooLarge(limit int64) error {
	return &core.Error{Kind: core.KindTooLarge, Code: "too_large", Message: fmt.Sprintf("upload over %d bytes", limit)}
}

func tooLargeOr(err error, limit int64, what string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(limit)
	}
	return invalid(what + ": " + err.Error())
}
