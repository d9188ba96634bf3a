package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

func serve(ctx context.Context, args []string) error {
	cfg, _, err := parse("serve", args)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	logAuth(logger, cfg)
	if cfg.Role == roleGateway {
		return serveGateway(ctx, cfg, logger)
	}
	st, err := buildStack(ctx, cfg, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return errors.Join(fmt.Errorf("listening: %w", err), closePool(ctx, st, cfg))
	}
	front := newDrainer(cfg.roleHandler(st.Handler))
	srv := &http.Server{Handler: front, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("serving", "addr", ln.Addr().String(), "templates", cfg.Templates, "role", cfg.Role, "node", cfg.NodeName)

	select {
	case err := <-errc:
		return errors.Join(err, closePool(ctx, st, cfg))
	case <-ctx.Done():
	}
	logger.Info("shutting down: draining in-flight runs", "wait", cfg.ShutdownWait)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownWait)
	defer cancel()
	// New requests are refused 503 draining while the listener stays open,
	// so that a gateway's request never meets a closing connection; a
	// node stays so for drainGrace at the least, until every gateway has
	// seen it draining.
	front.begin()
	grace := time.Duration(0)
	if cfg.Role == roleNode {
		grace = drainGrace
	}
	front.wait(sctx, grace)
	shutdownErr := srv.Shutdown(sctx)
	if errors.Is(shutdownErr, context.DeadlineExceeded) {
		shutdownErr = srv.Close()
	}
	return errors.Join(shutdownErr, closePool(ctx, st, cfg))
}

// logAuth says at start who may use the server; loudly when anyone may.
func logAuth(logger *slog.Logger, cfg *config) {
	switch {
	case cfg.auth.Enabled():
		logger.Info("authentication on: /v1 needs a bearer JWT whose sub names the tenant",
			"alg", cfg.auth.Algorithm(), "audience", cfg.auth.Audience, "issuer", cfg.auth.Issuer)
	case isLoopback(cfg.Listen):
		logger.Warn("AUTHENTICATION IS OFF: serving on loopback only, every request acts as one anonymous tenant; "+
			"set --jwt-hs256-secret-file or --jwt-public-key to serve other machines", "listen", cfg.Listen)
	default:
		logger.Warn("AUTHENTICATION IS OFF and --insecure-no-auth serves beyond loopback: anyone who can connect "+
			"can run code and use every session", "listen", cfg.Listen)
	}
}

// closePool ends every session and destroys every sandbox, bounded by its
// own deadline.
func closePool(ctx context.Context, st *stack, cfg *config) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return st.Close(cctx)
}
