package agentconn

import (
	"errors"
	"slices"

	"github.com/paddock-dev/paddock/runner"
)

// fileErrorKind reads the agent's file error code; the wire's codes are
// the runner's kinds, and an unknown one is not trusted as the client's
// fault.
func fileErrorKind(code string) (runner.FileErrorKind, bool) {
	kind := runner.FileErrorKind(code)
	return kind, code != "" && slices.Contains(runner.FileErrorKinds, kind)
}

// fileOpErr names the request and its path in the agent's FileError.
func fileOpErr(err error, op runner.FileOp, path string) error {
	var fe *runner.FileError
	if errors.As(err, &fe) {
		fe.Op, fe.Path = op, path
	}
	return err
}
