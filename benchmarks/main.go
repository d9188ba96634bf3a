package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type options struct {
	paddock, runsc, agent, cache string
	warmN, coldN, nativeN        int
	jsonOut                      string
}

func main() {
	var o options
	flag.StringVar(&o.paddock, "paddock", "bin/paddock", "paddock binary")
	flag.StringVar(&o.runsc, "runsc", os.Getenv("PADDOCK_RUNSC"), "runsc binary")
	flag.StringVar(&o.agent, "agent", "bin/paddock-agent", "agent binary")
	flag.StringVar(&o.cache, "cache-dir", "/var/cache/paddock", "cache with built root filesystems")
	flag.IntVar(&o.warmN, "warm", 100, "warm one-shot samples per language")
	flag.IntVar(&o.coldN, "cold", 15, "cold one-shot samples per language")
	flag.IntVar(&o.nativeN, "native", 50, "native process samples per language")
	flag.StringVar(&o.jsonOut, "json", "", "also write the raw samples to this JSON file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// lang is one language's probe program and native baseline.
type lang struct {
	name   string
	code   string
	native []string
}

// The native baselines are Debian's own interpreters, the same packages the
// templates install, not a version-manager shim that would inflate them.
var langs = []lang{
	{name: "python", code: "print(1)", native: []string{"/usr/bin/python3", "-c", "print(1)"}},
	{name: "node", code: "console.log(1)", native: []string{"/usr/bin/node", "-e", "console.log(1)"}},
}

func run(ctx context.Context, o options) error {
	var rows []row
	warm, err := startServer(ctx, o, -1)
	if err != nil {
		return err
	}
	for _, l := range langs {
		s, err := warm.sample(ctx, l, o.warmN, true)
		if err != nil {
			return errors.Join(err, warm.stop())
		}
		rows = append(rows, row{lang: l.name, kind: "warm one-shot, HTTP end to end (pool hit)", s: s})
	}
	for _, l := range langs {
		s, err := warm.sessionSamples(ctx, l, o.warmN)
		if err != nil {
			return errors.Join(err, warm.stop())
		}
		rows = append(rows, row{lang: l.name, kind: "session execute `x + 1`, HTTP round trip", s: s})
	}
	if err := warm.stop(); err != nil {
		return err
	}
	cold, err := startServer(ctx, o, 0)
	if err != nil {
		return err
	}
	for _, l := range langs {
		s, err := cold.sample(ctx, l, o.coldN, false)
		if err != nil {
			return errors.Join(err, cold.stop())
		}
		rows = append(rows, row{lang: l.name, kind: "cold one-shot, HTTP end to end (no pool)", s: s, cold: true})
	}
	if err := cold.stop(); err != nil {
		return err
	}
	for _, l := range langs {
		fs, err := templateRootfs(o.cache, l.name)
		if err != nil {
			return err
		}
		s, err := rawRunscSamples(ctx, o, l, fs, o.coldN)
		if err != nil {
			return err
		}
		rows = append(rows, row{lang: l.name, kind: "raw `runsc run` of the interpreter (cold baseline)", s: s, rawRunsc: true})
	}
	for _, l := range langs {
		s, err := nativeSamples(ctx, l, o.nativeN)
		if err != nil {
			return err
		}
		rows = append(rows, row{lang: l.name, kind: "native process start (baseline)", s: s, baseline: true})
	}
	printTable(os.Stdout, rows)
	if o.jsonOut != "" {
		return writeJSON(o.jsonOut, rows)
	}
	return nil
}

func writeJSON(path string, rows []row) error {
	type out struct {
		Lang    string    `json:"lang"`
		Kind    string    `json:"kind"`
		Samples []float64 `json:"samples_ms"`
	}
	var all []out
	for _, r := range rows {
		var ms []float64
		for _, d := range r.s {
			ms = append(ms, float64(d)/float64(time.Millisecond))
		}
		all = append(all, out{r.lang, r.kind, ms})
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
