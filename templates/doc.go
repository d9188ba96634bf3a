// Package templates holds the built-in sandbox templates: for each language,
// the Debian packages of its root filesystem, the commands that report what
// got installed, its warm-up code, its resource limits and its pool size.
//
// Templates are data: one JSON file per template, embedded in the binary and
// checked by Validate. Key names the root filesystem a template needs, so
// rootfs can cache built images by it.
//
// templates imports only the standard library. It must not import any other
// Paddock package (rootfs, runner, pool, kernels, api, cmd): everything
// that uses templates sits above it.
package templates
