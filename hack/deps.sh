#!/bin/sh
# Install the system packages sbxrun builds and tests with (Debian 12).
# Called by the demo, the full test run and CI; needs root.
set -eu
if [ "$(id -u)" -ne 0 ]; then echo "deps.sh: run as root (apt-get)" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# libseccomp-dev: cgo syscall tables; busybox-static: test and demo rootfs;
# runc: reference engine for the integration tests; bubblewrap: benchmark
# peer; uidmap: rootless id ranges; file: rootfs sanity check; podman and
# containerd: the engines that drive sbxrun as their runtime in the tests.
apt-get install -y -qq libseccomp-dev busybox-static runc bubblewrap uidmap file podman containerd jq >/dev/null
command -v go >/dev/null || { echo "deps.sh: Go is required (/usr/local/go/bin on PATH)" >&2; exit 1; }
