// Package baseline measures the baselines every Paddock number is
// compared with, and no Paddock: the template's own interpreter run
// natively (chrooted into a read-only view of its root filesystem in a
// private mount namespace), the host's interpreter at the same path, and
// raw runsc (a container of the spec Paddock renders for the template,
// `runsc run` or `runsc restore` of a checkpointed interpreter, with
// `runsc delete` counted), one at a time and at a sustained rate.
//
// It imports bench, langs, load, report, stats and Paddock's runner,
// ocispec, runsc, rootfs and templates; it must not import server, chart
// or the phases that measure Paddock.
package baseline
