#!/bin/bash
# The whole test suite, as CI runs it: install system packages, lint, build,
# every test as root (integration tests must not skip), golden drift check,
# cross builds. Usage (as root): hack/test-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
hack/deps.sh
make lint
make build
make test-root
make cross
# OCI runtime-tools validation, sbxrun beside the system runc (~2 min).
make conformance
echo "test-all: ok"
