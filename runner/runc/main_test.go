package runc_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runc"
	"github.com/paddock-dev/paddock/templates"
)

// crashStateEnv makes the test binary stand in for a server that dies
// (see TestRuncCleanupAfterServerKilled): it starts one python sandbox
// under the named state directory, prints its ID and waits to be killed.
const crashStateEnv = "PADDOCK_TEST_RUNC_CRASH_STATE"

// TestMain lets the test binary be libcontainer's init: the containers
// the tests start re-execute it.
func TestMain(m *testing.M) {
	runc.Init()
	if state := os.Getenv(crashStateEnv); state != "" {
		if err := startAndWait(state); err != nil {
			fmt.Fprintln(os.Stderr, "crash stand-in:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

func startAndWait(state string) error {
	tmpl, err := templates.Get("python")
	if err != nil {
		return err
	}
	img, err := (&rootfs.Builder{CacheDir: os.Getenv("PADDOCK_CACHE")}).Lookup(tmpl)
	if err != nil {
		return err
	}
	rt, err := runc.New(runc.Config{StateDir: state, Agent: os.Getenv("PADDOCK_AGENT")})
	if err != nil {
		return err
	}
	sb, err := rt.Start(context.Background(), runner.Spec{Template: "python", Language: "python", Rootfs: img.Path})
	if err != nil {
		return err
	}
	fmt.Println(sb.ID())
	select {} // until killed
}
