// Package mcpdoor is Paddock's Model Context Protocol door: the tools an
// LLM host calls (run_code, create_session, execute, write_file,
// read_file, list_files, close_session, pause_session, resume_session,
// fork_session), served over Streamable HTTP at /mcp on Paddock's own
// listener (Mount) and bridged onto stdio for hosts that start a command
// (Bridge, used by `paddock mcp`). The same tools' JSON Schemas are
// served at GET /v1/tools in OpenAI and Anthropic function-calling
// shapes.
//
// The door only translates: every tool is one call into the door-neutral
// core (package core), which owns tenancy, scopes, limits, validation and
// metrics. The door keeps no per-tenant counts; what it keeps is which
// Paddock sessions each MCP session opened, so that they close when the
// MCP session ends. Each MCP session holds one of its tenant's
// connections in the core (HoldConnection) from its initialize until it
// ends (holds.go): an initialize over the cap answers 429.
//
// mcpdoor may import core, runner (value types) and gin; it must not
// import cmd, api, pool or kernels for work, a concrete runtime
// (runner/runsc) or rootfs.
package mcpdoor
