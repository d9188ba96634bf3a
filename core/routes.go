package core

import (
	"slices"
	"strings"
	"time"
)

// What a request that names only its language gets (Template.DefaultFor).
const (
	defaultRuns     = "runs"
	defaultSessions = "sessions"
)

// target is a pool template that serves work, with its language and its
// default run timeout.
type target struct {
	template       string
	language       string
	defaultTimeout time.Duration
}

// routes are where the work of one language goes when a request names no
// template.
type routes struct {
	run     string            // a run that imports none of warm's modules
	session string            // every session
	warm    map[string]string // top-level module → the first template that has it warm
}

// newRoutes works out each language's routes from the configured
// templates: the template whose DefaultFor claims runs (or sessions), else
// the one named as the language, else the first of that language.
func newRoutes(tmpls []Template) map[string]*routes {
	out := map[string]*routes{}
	pick := func(lang, kind string) string {
		first, named := "", ""
		for _, t := range tmpls {
			if t.Language != lang {
				continue
			}
			if slices.Contains(t.DefaultFor, kind) {
				return t.Name
			}
			if first == "" {
				first = t.Name
			}
			if t.Name == lang {
				named = t.Name
			}
		}
		if named != "" {
			return named
		}
		return first
	}
	for _, t := range tmpls {
		r, ok := out[t.Language]
		if !ok {
			r = &routes{run: pick(t.Language, defaultRuns), session: pick(t.Language, defaultSessions), warm: map[string]string{}}
			out[t.Language] = r
		}
		for _, m := range t.WarmImports {
			if _, taken := r.warm[m]; !taken {
				r.warm[m] = t.Name
			}
		}
	}
	return out
}

// forRun is the template a run of code goes to: the one that has a module
// the code imports warm, else the language's run default.
func (r *routes) forRun(language, code string) string {
	if len(r.warm) == 0 || language != "python" {
		return r.run
	}
	for _, m := range pythonImports(code) {
		if t, ok := r.warm[m]; ok {
			return t
		}
	}
	return r.run
}

// resolve returns where a request goes: the template it names, which must
// be of its language when it names one too, else its language's route for
// a run of code (run true) or a session. Errors are KindInvalid naming
// the choices.
func (s *Service) resolve(language, template string, run bool, code string) (target, error) {
	if template != "" {
		tgt, ok := s.targets[template]
		if !ok {
			return target{}, invalid("unknown_template", "unknown template %q (known: %s)", template, strings.Join(s.names, ", "))
		}
		if language != "" && language != tgt.language {
			return target{}, invalid("template_language", "template %q runs %s, not %s", template, tgt.language, language)
		}
		return tgt, nil
	}
	known := strings.Join(s.languages, ", ")
	if language == "" {
		return target{}, invalid("invalid_request", "language is required (one of: %s)", known)
	}
	r, ok := s.routes[language]
	if !ok {
		return target{}, invalid("unknown_language", "unknown language %q (known: %s)", language, known)
	}
	if run {
		return s.targets[r.forRun(language, code)], nil
	}
	return s.targets[r.session], nil
}

// pythonImports lists the top-level modules that code's import statements
// name, in order, from a line scan: `import a.b as c, d` gives a and d,
// `from a.b import c` gives a; relative imports give nothing. It reads
// statements at any indentation and after semicolons, and may be fooled
// by import lines inside strings: a wrong guess costs a slower start, not
// a wrong result, as every Python template holds the same packages.
func pythonImports(code string) []string {
	var mods []string
	add := func(dotted string) {
		name, _, _ := strings.Cut(strings.TrimSpace(dotted), ".")
		if name != "" && !slices.Contains(mods, name) {
			mods = append(mods, name)
		}
	}
	for line := range strings.Lines(code) {
		line, _, _ = strings.Cut(line, "#")
		for stmt := range strings.SplitSeq(line, ";") {
			stmt = strings.TrimSpace(stmt)
			if rest, ok := cutKeyword(stmt, "import"); ok {
				for part := range strings.SplitSeq(strings.Trim(rest, "()\\ \t"), ",") {
					mod, _, _ := strings.Cut(strings.TrimSpace(part), " ")
					add(mod)
				}
			} else if rest, ok := cutKeyword(stmt, "from"); ok {
				mod, after, _ := strings.Cut(rest, " ")
				if _, ok := cutKeyword(strings.TrimSpace(after), "import"); ok && !strings.HasPrefix(mod, ".") {
					add(mod)
				}
			}
		}
	}
	return mods
}

// cutKeyword returns what follows keyword at the start of stmt, when a
// space or tab separates them.
func cutKeyword(stmt, keyword string) (string, bool) {
	rest, ok := strings.CutPrefix(stmt, keyword)
	if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(rest), true
}
