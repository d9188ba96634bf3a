package jupyterdoor

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/core"
)

// A kernel name is how Jupyter names a language; Paddock's core takes
// languages. Languages without a Jupyter name keep their own.
var kernelNames = map[string]string{"python": "python3", "node": "javascript"}

// kernelName is the kernel name of a Paddock language.
func kernelName(language string) string {
	if n, ok := kernelNames[language]; ok {
		return n
	}
	return language
}

// languageOf is the Paddock language of a kernel name ("" is the
// default kernel, python3).
func (d *door) languageOf(name string) (string, error) {
	if name == "" {
		name = d.defaultKernel()
	}
	for _, lang := range d.svc.Languages() {
		if kernelName(lang) == name {
			return lang, nil
		}
	}
	return "", fmt.Errorf("%w %q (GET /api/kernelspecs lists them)", errNoKernelName, name)
}

func (d *door) defaultKernel() string {
	langs := d.svc.Languages()
	for _, l := range langs {
		if l == "python" {
			return kernelName(l)
		}
	}
	if len(langs) > 0 {
		return kernelName(langs[0])
	}
	return ""
}

// langInfo is what a kernel_info_reply and a kernelspec say of a language.
type langInfo struct {
	Language, DisplayName, Version, Mimetype, Extension, Pygments string
}

func infoOf(t core.Template) langInfo {
	switch t.Language {
	case "python":
		v := t.Versions["python"]
		return langInfo{"python", "Python " + v + " (Paddock, gVisor)", v, "text/x-python", ".py", "ipython3"}
	case "node":
		v := t.Versions["node"]
		if len(v) > 0 && v[0] == 'v' {
			v = v[1:]
		}
		return langInfo{"javascript", "JavaScript (Node.js " + v + ", Paddock, gVisor)", v, "text/javascript", ".js", "javascript"}
	}
	return langInfo{t.Language, t.Name + " (Paddock, gVisor)", t.Versions[t.Language], "text/plain", "", t.Language}
}

// templates are the first template of each language, in the core's order.
func (d *door) templates() []core.Template {
	var out []core.Template
	seen := map[string]bool{}
	for _, t := range d.svc.Templates() {
		if !seen[t.Language] {
			seen[t.Language] = true
			out = append(out, t.Template)
		}
	}
	return out
}

func (d *door) templateOf(language string) core.Template {
	t, err := d.svc.Template(language)
	if err != nil {
		return core.Template{Name: language, Language: language}
	}
	return t.Template
}

func specOf(t core.Template) gin.H {
	li := infoOf(t)
	return gin.H{
		"name": kernelName(t.Language),
		"spec": gin.H{
			"argv":           []string{},
			"env":            gin.H{},
			"display_name":   li.DisplayName,
			"language":       li.Language,
			"interrupt_mode": "message",
			"metadata": gin.H{"paddock": gin.H{
				"template": t.Name, "description": t.Description, "versions": t.Versions,
			}},
		},
		"resources": gin.H{},
	}
}

func (d *door) kernelspecs(c *gin.Context) {
	specs := gin.H{}
	for _, t := range d.templates() {
		specs[kernelName(t.Language)] = specOf(t)
	}
	c.JSON(http.StatusOK, gin.H{"default": d.defaultKernel(), "kernelspecs": specs})
}

func (d *door) kernelspec(c *gin.Context) {
	lang, err := d.languageOf(c.Param("name"))
	if err != nil {
		c.AbortWithStatusJSON(http.StatusNotFound, gin.H{"message": err.Error(), "reason": "kernelspec_not_found"})
		return
	}
	c.JSON(http.StatusOK, specOf(d.templateOf(lang)))
}
