#!/bin/sh
# Builds kube-apiserver and etcd from the Go module proxy into DIR, for the
# tests that need a real Kubernetes API server (internal/kubetest).
# Usage: build.sh DIR
#
# Each comes from its own module here (apiserver/, etcd/), which pins its
# version: k8s.io/kubernetes v1.37.2 with its staging modules at v0.37.2,
# and go.etcd.io/etcd/server/v3 v3.7.3. Both are static (no cgo). They are
# built into a temporary directory beside DIR and moved into place last, so
# DIR exists only when both binaries are whole.
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
k8s=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$here/apiserver/go.mod")
minor=$(echo "$k8s" | cut -d. -f2)
tmp=$(mktemp -d "$(dirname "$dir")/.build.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

# kube-apiserver reports the version its release build stamps in.
ver=k8s.io/component-base/version
ldflags="-s -w -X $ver.gitVersion=$k8s -X $ver.gitMajor=1 -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean"
cd "$here/apiserver"
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="$ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
cd "$here/etcd"
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3

rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
