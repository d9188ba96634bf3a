package rootfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// hostAptDir is where the host's apt configuration lives.
const hostAptDir = "/etc/apt"

// source is one apt repository entry: the packages of suite from uri,
// signed by a key in the keyring file signedBy ("" for apt's trusted keys).
type source struct {
	uri        string
	suite      string
	components []string
	signedBy   string
}

// line renders s in apt's one-line format, which mmdebstrap accepts as a
// mirror argument.
func (s source) line() string {
	opts := ""
	if s.signedBy != "" {
		opts = "[signed-by=" + s.signedBy + "] "
	}
	return "deb " + opts + s.uri + " " + s.suite + " " + strings.Join(s.components, " ")
}

// readAptSources reads every binary ("deb") source configured in aptDir:
// sources.list and sources.list.d/*.list in one-line format and
// sources.list.d/*.sources in deb822 format, in apt's order. Disabled
// entries, deb-src entries and flat repositories are left out.
func readAptSources(aptDir string) ([]source, error) {
	files := []string{filepath.Join(aptDir, "sources.list")}
	for _, pattern := range []string{"*.list", "*.sources"} {
		matches, err := filepath.Glob(filepath.Join(aptDir, "sources.list.d", pattern))
		if err != nil {
			return nil, fmt.Errorf("listing apt sources: %w", err)
		}
		files = append(files, matches...)
	}
	var all []source
	for _, file := range files {
		got, err := readSourcesFile(file)
		if err != nil {
			return nil, err
		}
		all = append(all, got...)
	}
	return all, nil
}

func readSourcesFile(file string) ([]source, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading apt sources: %w", err)
	}
	defer f.Close()
	parse := parseOneLine
	if strings.HasSuffix(file, ".sources") {
		parse = parseDeb822
	}
	got, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", file, err)
	}
	return got, nil
}

// parseOneLine parses apt's one-line format:
//
//	deb [option=value ...] uri suite [component ...]
func parseOneLine(r io.Reader) ([]source, error) {
	var out []source
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "deb" {
			continue
		}
		rest := fields[1:]
		signedBy := ""
		if len(rest) > 0 && strings.HasPrefix(rest[0], "[") {
			end := -1
			for i, f := range rest {
				if strings.HasSuffix(f, "]") {
					end = i
					break
				}
			}
			if end < 0 {
				return nil, fmt.Errorf("line %d: unclosed option list", n)
			}
			opts := strings.Fields(strings.Trim(strings.Join(rest[:end+1], " "), "[]"))
			for _, o := range opts {
				if v, ok := strings.CutPrefix(o, "signed-by="); ok {
					signedBy = keyringPath(v)
				}
			}
			rest = rest[end+1:]
		}
		if len(rest) < 2 {
			return nil, fmt.Errorf("line %d: want a URI and a suite", n)
		}
		out = appendSource(out, source{uri: rest[0], suite: rest[1], components: rest[2:], signedBy: signedBy})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseDeb822 parses apt's deb822 format: stanzas of "Field: value" lines
// separated by blank lines, with "#" comments and indented continuation
// lines.
func parseDeb822(r io.Reader) ([]source, error) {
	var (
		out    []source
		stanza = map[string]string{}
		last   string
	)
	flush := func() {
		out = append(out, stanzaSources(stanza)...)
		stanza, last = map[string]string{}, ""
	}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("line %d: continuation line outside a field", n)
			}
			stanza[last] += "\n" + strings.TrimSpace(line)
		default:
			key, value, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("line %d: want \"Field: value\"", n)
			}
			last = strings.ToLower(strings.TrimSpace(key))
			stanza[last] = strings.TrimSpace(value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	return out, nil
}

// stanzaSources expands one deb822 stanza into one source per URI and suite.
func stanzaSources(stanza map[string]string) []source {
	if strings.EqualFold(stanza["enabled"], "no") {
		return nil
	}
	isDeb := false
	for _, typ := range strings.Fields(stanza["types"]) {
		isDeb = isDeb || typ == "deb"
	}
	if !isDeb {
		return nil
	}
	var out []source
	components := strings.Fields(stanza["components"])
	signedBy := keyringPath(stanza["signed-by"])
	for _, uri := range strings.Fields(stanza["uris"]) {
		for _, suite := range strings.Fields(stanza["suites"]) {
			out = appendSource(out, source{uri: uri, suite: suite, components: components, signedBy: signedBy})
		}
	}
	return out
}

// keyringPath returns a Signed-By value when it names one keyring file, and
// "" otherwise: a key embedded in the sources file, a fingerprint, or a
// list cannot be handed on in one-line format.
func keyringPath(v string) string {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\n,]") {
		return ""
	}
	return v
}

// appendSource appends s unless it is a flat repository (a suite ending in
// "/" and no components), which mmdebstrap cannot take here.
func appendSource(out []source, s source) []source {
	if strings.HasSuffix(s.suite, "/") || len(s.components) == 0 {
		return out
	}
	return append(out, s)
}
