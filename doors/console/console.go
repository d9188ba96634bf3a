package console

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Path is where the console is served.
const Path = "/console/"

// Options configure the console.
type Options struct {
	// Version is the server's version, shown in the page's header.
	Version string
}

// Mount returns the function that adds the console's routes to the API's
// engine: GET and HEAD of /console/ and its assets, and /console
// redirected to /console/. It panics if the embedded assets are unusable,
// a bug the package's tests catch.
func Mount(opts Options) func(*gin.Engine) {
	assets, err := loadAssets()
	if err != nil {
		panic(err)
	}
	if _, ok := assets["index.html"]; !ok {
		panic("console: no index.html among the assets")
	}
	if opts.Version != "" {
		// The page names the version, so its ETag is of the page with it.
		index := assets["index.html"]
		assets["index.html"] = newAsset(bytes.Replace(index.body, []byte(`data-version=""`),
			[]byte(fmt.Sprintf(`data-version="%s"`, html.EscapeString(opts.Version))), 1), index.contentType)
	}
	serve := func(c *gin.Context) {
		name := strings.TrimPrefix(c.Param("file"), "/")
		if name == "" {
			name = "index.html"
		}
		a, ok := assets[name]
		setHeaders(c.Writer.Header())
		if !ok {
			c.Header("Content-Type", "application/json")
			c.String(http.StatusNotFound, `{"code":"not_found","message":"no such page in the console"}`)
			return
		}
		c.Header("Content-Type", a.contentType)
		c.Header("ETag", a.etag)
		http.ServeContent(c.Writer, c.Request, name, time.Time{}, bytes.NewReader(a.body))
	}
	redirect := func(c *gin.Context) {
		setHeaders(c.Writer.Header())
		c.Redirect(http.StatusMovedPermanently, Path)
	}
	return func(r *gin.Engine) {
		r.GET("/console", redirect)
		r.HEAD("/console", redirect)
		r.GET("/console/*file", serve)
		r.HEAD("/console/*file", serve)
	}
}
