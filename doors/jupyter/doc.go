// Package jupyterdoor serves Paddock's sessions as Jupyter kernels: the
// kernel service REST API (/api, /api/kernelspecs, /api/kernels,
// /api/sessions) and the kernel WebSocket (/api/kernels/{id}/channels) in
// both of its framings, speaking Jupyter messaging protocol 5.3. Stock
// Jupyter front ends reach it directly (@jupyterlab/services) or through
// Jupyter Server's gateway mode.
//
// A kernel is a Paddock session of its tenant: every call goes through
// core.Service, which owns tenancy, auth, limits, validation and history.
// The door only translates. An open kernel WebSocket holds one of its
// tenant's connections (core's HoldConnection) until it closes. It
// holds nothing of the session's sandbox, so the session may hibernate
// under an open socket (idle or paused) and the next cell wakes it.
// It imports core, runner and gin, never api, cmd, kernels, pool or
// another door.
package jupyterdoor
