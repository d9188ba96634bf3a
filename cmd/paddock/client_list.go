package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// templateRow is the part of GET /v1/templates' answer the tables show.
type templateRow struct {
	Name        string `json:"name"`
	Language    string `json:"language"`
	Description string `json:"description"`
	Runtime     string `json:"runtime"`
	Limits      struct {
		MemoryMB  int     `json:"memory_mb"`
		Processes int     `json:"processes"`
		CPUs      float64 `json:"cpus"`
		DiskMB    int     `json:"disk_mb"`
		TimeoutMS int     `json:"timeout_ms"`
	} `json:"limits"`
	DefaultFor []string `json:"default_for"`
	Pool       struct {
		Target       int    `json:"target"`
		Floor        int    `json:"floor"`
		Ceiling      int    `json:"ceiling"`
		Ready        int    `json:"ready"`
		InUse        int    `json:"in_use"`
		Starting     int    `json:"starting"`
		Waiting      int    `json:"waiting"`
		Healthy      bool   `json:"healthy"`
		Snapshot     string `json:"snapshot"`
		Hits         uint64 `json:"hits"`
		Misses       uint64 `json:"misses"`
		Kernels      int    `json:"kernels"`
		KernelsReady int    `json:"kernels_ready"`
	} `json:"pool"`
}

// listFlags parses the flags of templates and pools, which take only the
// shared ones.
func listFlags(name string, args []string, w io.Writer) (remoteFlags, error) {
	var r remoteFlags
	fs := newClientFlags(name, "[flags]", w)
	r.register(fs)
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	r.defaultToken()
	if fs.NArg() > 0 {
		return r, fmt.Errorf("%s takes no arguments, got %q", name, fs.Arg(0))
	}
	return r, nil
}

// fetchTemplates gets GET /v1/templates, raw and decoded.
func fetchTemplates(ctx context.Context, r remoteFlags) ([]byte, []templateRow, error) {
	var body struct {
		Templates []templateRow `json:"templates"`
	}
	raw, err := newAPIClient(r).getJSON(ctx, "/v1/templates", &body)
	return raw, body.Templates, err
}

// clientTemplates is `paddock templates`: the server's templates, one a
// row, or GET /v1/templates' answer as it is with --json.
func clientTemplates(ctx context.Context, args []string, cio clientIO) int {
	r, err := listFlags("templates", args, cio.stderr)
	if err != nil {
		return usageExit(cio.stderr, err)
	}
	raw, rows, err := fetchTemplates(ctx, r)
	if err != nil {
		return reportErr(ctx, cio.stderr, err)
	}
	if r.json {
		fmt.Fprintf(cio.stdout, "%s\n", strings.TrimSpace(string(raw)))
		return exitOK
	}
	tw := tabwriter.NewWriter(cio.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLANGUAGE\tRUNTIME\tMEMORY\tCPUS\tPROCS\tDISK\tTIMEOUT\tDEFAULT FOR\tDESCRIPTION")
	for _, t := range rows {
		l := t.Limits
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d MB\t%s\t%d\t%d MB\t%s\t%s\t%s\n", t.Name, t.Language, dash(t.Runtime),
			l.MemoryMB, strconv.FormatFloat(l.CPUs, 'g', -1, 64), l.Processes, l.DiskMB,
			seconds(l.TimeoutMS), dash(strings.Join(t.DefaultFor, ",")), t.Description)
	}
	_ = tw.Flush()
	return exitOK
}

// clientPools is `paddock pools`: each template's pool, one a row, or
// with --json {"pools": [...]}, each the template's pool object as the
// server sent it with the template's name added.
func clientPools(ctx context.Context, args []string, cio clientIO) int {
	r, err := listFlags("pools", args, cio.stderr)
	if err != nil {
		return usageExit(cio.stderr, err)
	}
	raw, rows, err := fetchTemplates(ctx, r)
	if err != nil {
		return reportErr(ctx, cio.stderr, err)
	}
	if r.json {
		var body struct {
			Templates []struct {
				Name string                     `json:"name"`
				Pool map[string]json.RawMessage `json:"pool"`
			} `json:"templates"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			return reportErr(ctx, cio.stderr, &apiError{exitProtocol, "decoding GET /v1/templates: " + err.Error()})
		}
		pools := make([]map[string]json.RawMessage, 0, len(body.Templates))
		for _, t := range body.Templates {
			p := t.Pool
			if p == nil {
				p = map[string]json.RawMessage{}
			}
			name, _ := json.Marshal(t.Name)
			p["template"] = name
			pools = append(pools, p)
		}
		out, _ := json.Marshal(map[string]any{"pools": pools})
		fmt.Fprintf(cio.stdout, "%s\n", out)
		return exitOK
	}
	tw := tabwriter.NewWriter(cio.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tREADY\tIN USE\tSTARTING\tWAITING\tTARGET\tFLOOR..CEILING\tKERNELS\tSNAPSHOT\tHITS\tMISSES\tHEALTHY")
	for _, t := range rows {
		p := t.Pool
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d..%d\t%d/%d\t%s\t%d\t%d\t%s\n", t.Name, p.Ready, p.InUse, p.Starting,
			p.Waiting, p.Target, p.Floor, p.Ceiling, p.KernelsReady, p.Kernels, dash(p.Snapshot), p.Hits, p.Misses, yesNo(p.Healthy))
	}
	_ = tw.Flush()
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// seconds prints a millisecond count as seconds, "-" when unset.
func seconds(ms int) string {
	if ms <= 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(ms)/1000, 'g', -1, 64) + "s"
}
