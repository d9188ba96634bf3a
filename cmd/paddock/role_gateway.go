package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/paddock-dev/paddock/gateway"
	"github.com/paddock-dev/paddock/internal/edge"
)

// serveGateway serves --role=gateway: no runtime, pool, session or
// history; every door forwarded to the nodes (package gateway).
func serveGateway(ctx context.Context, cfg *config, logger *slog.Logger) error {
	source, follow, err := cfg.nodeSource(logger)
	if err != nil {
		return err
	}
	g, err := gateway.New(gateway.Config{
		Source:       source,
		Credential:   cfg.nodeCred,
		Authenticate: gatewayAuth(cfg),
		MaxBodyBytes: cfg.MaxBody,
		Logger:       logger,
	})
	if err != nil {
		return err
	}
	gctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	runDiscovery(gctx, follow, logger)
	g.Start(gctx)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("serving as a gateway", "addr", ln.Addr().String(), "discovery", cfg.Discovery, "nodes", len(source.Nodes()))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownWait)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		return srv.Close()
	} else {
		return err
	}
}

// gatewayAuth checks a caller's token with the JWT configuration the
// nodes share, wherever a door reads one: Authorization (Bearer, or
// Jupyter's token scheme), E2B's X-API-KEY, Jupyter's ?token=. Nil when
// authentication is off.
func gatewayAuth(cfg *config) func(*http.Request) (string, bool, error) {
	if !cfg.auth.Enabled() {
		return nil
	}
	a := cfg.auth
	return func(r *http.Request) (string, bool, error) {
		tok := r.Header.Get("X-API-KEY")
		if h := r.Header.Get("Authorization"); tok == "" && h != "" {
			t, err := edge.Credential(h, "Bearer", "token")
			if err != nil {
				return "", true, err
			}
			tok = t
		}
		if tok == "" {
			tok = r.URL.Query().Get("token")
		}
		if tok == "" {
			return "", false, nil
		}
		tenant, err := a.Tenant(tok)
		return tenant, true, err
	}
}
