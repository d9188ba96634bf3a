package e2bdoor

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// Paging of GET /v2/sandboxes.
const (
	defaultPageSize = 100
	maxPageSize     = 100
)

// listed is the caller's live sandboxes, oldest first: those of the
// sessions the core lists for the caller that are a sandbox's main one.
func (d *door) listed(c *gin.Context) []sandboxDetail {
	var out []sandboxDetail
	for _, s := range d.core.Sessions(callerOf(c)) {
		if sb, ok := d.reg.get(s.ID); ok {
			out = append(out, detailOf(sb, s))
		}
	}
	slices.SortFunc(out, func(a, b sandboxDetail) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), strings.Compare(a.SandboxID, b.SandboxID))
	})
	return out
}

// listV1 is the older GET /sandboxes: every running sandbox of the
// caller (paused ones are left out, as E2B's v1 list does), filtered by
// metadata.
func (d *door) listV1(c *gin.Context) {
	want, err := metadataFilter(c.Query("metadata"))
	if err != nil {
		fail(c, err)
		return
	}
	out := []sandboxDetail{}
	for _, s := range d.listed(c) {
		if s.State == stateRunning && matches(s.Metadata, want) {
			out = append(out, s)
		}
	}
	c.JSON(http.StatusOK, out)
}

// listV2 is GET /v2/sandboxes?state=&metadata=&limit=&nextToken=: a page
// of the caller's sandboxes, X-Next-Token naming where the next page
// starts and X-Total-Running counting every match. state is running,
// paused or both (comma-separated or repeated); without it both are
// listed, as the SDK's default asks.
func (d *door) listV2(c *gin.Context) {
	want, err := metadataFilter(c.Query("metadata"))
	if err != nil {
		fail(c, err)
		return
	}
	limit, err := pageSize(c.Query("limit"))
	if err != nil {
		fail(c, err)
		return
	}
	after, err := decodeCursor(c.Query("nextToken"))
	if err != nil {
		fail(c, err)
		return
	}
	states, err := stateFilter(c.QueryArray("state"))
	if err != nil {
		fail(c, err)
		return
	}
	tmpl := c.Query("template")
	all := []sandboxDetail{}
	for _, s := range d.listed(c) {
		if states[s.State] && matches(s.Metadata, want) && (tmpl == "" || tmpl == s.TemplateID || tmpl == s.Alias) {
			all = append(all, s)
		}
	}
	c.Header("X-Total-Running", strconv.Itoa(len(all)))
	page := []sandboxDetail{}
	for _, s := range all {
		if after != "" && cursorOf(s) <= after {
			continue
		}
		if len(page) == limit {
			c.Header("X-Next-Token", encodeCursor(cursorOf(page[len(page)-1])))
			break
		}
		page = append(page, s)
	}
	c.JSON(http.StatusOK, page)
}

// stateFilter parses the state query: running, paused, or both when
// none is given.
func stateFilter(q []string) (map[string]bool, error) {
	if len(q) == 0 {
		return map[string]bool{stateRunning: true, statePaused: true}, nil
	}
	out := map[string]bool{}
	for _, st := range q {
		for _, s := range strings.Split(st, ",") {
			if s != stateRunning && s != statePaused {
				return nil, invalid(fmt.Sprintf("state %q: give running or paused", s))
			}
			out[s] = true
		}
	}
	return out, nil
}

// cursorOf orders sandboxes as listed does: start time, then id.
func cursorOf(s sandboxDetail) string {
	return fmt.Sprintf("%020d/%s", s.StartedAt.UnixNano(), s.SandboxID)
}

func encodeCursor(c string) string { return base64.RawURLEncoding.EncodeToString([]byte(c)) }

func decodeCursor(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) > 256 {
		return "", invalid("nextToken is not one this server gave")
	}
	return string(b), nil
}

func pageSize(q string) (int, error) {
	if q == "" {
		return defaultPageSize, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > maxPageSize {
		return 0, invalid(fmt.Sprintf("limit must be between 1 and %d, got %q", maxPageSize, q))
	}
	return n, nil
}

// metadataFilter parses the SDK's metadata query: a URL-encoded query
// string of key=value pairs, all of which must match.
func metadataFilter(q string) (map[string]string, error) {
	want := map[string]string{}
	if q == "" {
		return want, nil
	}
	vals, err := url.ParseQuery(q)
	if err != nil || len(vals) > maxMetadata {
		return nil, invalid("metadata filter must be key=value pairs joined by &")
	}
	for k, v := range vals {
		want[k] = v[len(v)-1]
	}
	return want, nil
}

func matches(md, want map[string]string) bool {
	for k, v := range want {
		if got, ok := md[k]; !ok || got != v {
			return false
		}
	}
	return true
}
