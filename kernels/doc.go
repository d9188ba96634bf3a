// Package kernels will keep stateful Jupyter-style Python and Node sessions
// alive inside sandboxes taken from the pool (see DESIGN.md). It is not
// built yet: only one-shot runs exist so far.
//
// kernels may import pool, runner and templates; it must not import api or
// cmd.
package kernels
