// Package docs holds no code: its one test checks that the Markdown of
// the repository (README.md, docs/ and benchmarks/) links only to files
// and headings that exist, and that the README stays a landing page.
package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// maxReadmeLines is the most the landing page may grow to; the rest
// belongs in a topic file under docs/.
const maxReadmeLines = 300

func TestRelativeLinksResolve(t *testing.T) {
	repo := os.DirFS("..")
	files, err := markdownFiles(repo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") || !slices.Contains(files, "docs/README.md") {
		t.Fatalf("found %v: README.md and docs/README.md must be among them", files)
	}
	for _, problem := range checkLinks(repo, files) {
		t.Error(problem)
	}
}

func TestReadmeIsALandingPage(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail into a file under docs/", n, maxReadmeLines)
	}
}

// TestCheckerFindsDeadLinks keeps the checker honest: each kind of
// broken link in a made-up tree must be reported, and the good ones not.
func TestCheckerFindsDeadLinks(t *testing.T) {
	tree := fstest.MapFS{
		"README.md": {Data: []byte("# Top\n\n" +
			"[ok](docs/a.md) [ok anchor](docs/a.md#the-second-part) [ok here](#top)\n" +
			"[gone](docs/missing.md) [bad anchor](docs/a.md#no-such-heading) [bad here](#nowhere)\n" +
			"`[in code](docs/missing-in-code.md)` [web](https://example.com/x.md)\n" +
			"```\n[in a fence](docs/missing-in-fence.md)\n```\n")},
		"docs/a.md": {Data: []byte("# A\n\n## The second part\n\n## The second part\n\n" +
			"[dup](#the-second-part-1) [up](../README.md#top) [img](../pic.png)\n")},
	}
	files, err := markdownFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	got := checkLinks(tree, files)
	want := []string{
		"README.md:4: docs/missing.md: no such file",
		"README.md:4: docs/a.md#no-such-heading: no heading with that anchor in docs/a.md",
		"README.md:4: #nowhere: no heading with that anchor in README.md",
		"docs/a.md:7: ../pic.png: no such file",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// markdownFiles lists README.md and every .md file under docs/ and
// benchmarks/, in lexical order.
func markdownFiles(fsys fs.FS) ([]string, error) {
	files := []string{"README.md"}
	for _, dir := range []string{"docs", "benchmarks"} {
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return files, nil
}

var (
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// checkLinks returns one line per relative link in files that does not
// resolve: a missing file, or an anchor no heading of its file makes.
func checkLinks(fsys fs.FS, files []string) []string {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(name string) (map[string]bool, error) {
		if a, ok := anchors[name]; ok {
			return a, nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(b))
		anchors[name] = a
		return a, nil
	}
	var problems []string
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", file, err))
			continue
		}
		for _, l := range links(string(b)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			if u, err := url.Parse(l.target); err == nil && u.Scheme != "" {
				continue // a web address, not checked here
			}
			name := file
			if target != "" {
				unescaped, err := url.PathUnescape(target)
				if err != nil {
					unescaped = target
				}
				name = path.Join(path.Dir(file), unescaped)
				if _, err := fs.Stat(fsys, name); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file", file, l.line, l.target))
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(name, ".md") {
				continue
			}
			a, err := anchorsOf(name)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %v", file, l.line, l.target, err))
				continue
			}
			if !a[strings.ToLower(anchor)] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no heading with that anchor in %s", file, l.line, l.target, name))
			}
		}
	}
	return problems
}

type link struct {
	line   int
	target string
}

// links returns the targets of the inline and reference links of a
// Markdown text, outside fenced code blocks and code spans.
func links(text string) []link {
	var out []link
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub makes for a Markdown text's
// headings: the text lower-cased, punctuation other than hyphens and
// underscores dropped, spaces turned into hyphens, and a repeated
// anchor numbered -1, -2 and so on.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

var linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

func slug(h string) string {
	h = linkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
