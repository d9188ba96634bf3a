// Package rootfs builds the root filesystem of a template from Debian
// packages with mmdebstrap and caches it on disk under the template's Key.
//
// A Builder looks images up (Lookup, which never builds) and builds missing
// ones (Ensure). An image is a directory tree that an OCI bundle's root.path
// points to, plus a metadata file beside it, outside the tree the sandbox
// sees. Images appear by one atomic rename, so a crashed or cancelled build
// never leaves a half image that Lookup accepts. Builds of one image are
// serialised within a process and, with a lock file, across processes.
//
// The Debian mirror is read from the host's apt configuration unless the
// Builder names one.
//
// rootfs imports templates, internal/filelock (a leaf on the standard
// library) and the standard library only. It must not import runner, pool,
// kernels, api or cmd; only cmd (and benchmarks) wire it in.
package rootfs
