// Package console is Paddock's web console: a single page, served at
// /console/ on Paddock's own listener, with three views (a playground
// for one-shot runs, a notebook on a session with rich outputs, and an
// operator view of the pools, recent runs and cold against warm
// latencies). Its assets (plain HTML, CSS and JavaScript, no build step)
// are embedded in the binary; nothing is fetched from elsewhere.
//
// The console is a door that calls the public API from the browser
// (/v1 and /v1/graphql, with the token the user enters), never a room
// below it: the server side only hands out files, under a
// Content-Security-Policy that allows nothing but the page's own origin,
// and the API's browser guard applies to it as to every door.
//
// console may import gin and net/http (and the rest of the standard
// library) only: no core, api, pool, kernels or any other Paddock
// package.
package console
