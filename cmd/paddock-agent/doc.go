// Command paddock-agent is the in-sandbox agent: the sandbox's init
// process, speaking the wire protocol on its stdin and stdout and logging
// on its stderr. It only parses flags and hands over to runner/agent.
//
// It is built static (CGO_ENABLED=0) and must import only the standard
// library, runner/agent and runner/wire.
package main
