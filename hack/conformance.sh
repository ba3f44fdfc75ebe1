#!/bin/bash
# OCI runtime conformance: build the opencontainers/runtime-tools validation
# programs and run every one against the system runc and against sbxrun on
# the same machine, then print a per-test comparison.
#
# Usage (as root): hack/conformance.sh [TEST...]
#   TEST          validation test names (default: all), e.g. "default kill"
# Environment:
#   SBXRUN        runtime under test (default: bin/sbxrun, built by `make build`)
#   RUNC          reference runtime (default: /usr/bin/runc)
#   TEST_TIMEOUT  seconds per test and runtime (default: 120)
#   KEEP=1        keep the work directory (TAP output, bundles) for inspection
#   RUNTIME_TOOLS_SRC  diagnosis only: build from this local runtime-tools
#                 tree (go.mod replace) instead of the pristine v0.9.0; the
#                 report then says the suite was modified
#
# The runtime-tools code (v0.9.0, no go.mod) is built in a throwaway module
# under hack/.cache/conformance (gitignored; never commit it) that pins
# runtime-spec v1.0.2. Each test binary runs in its own private mount
# namespace (unshare -m --propagation private), with a private TMPDIR for
# its bundles and a private --root state directory per runtime.
#
# Exit status: 0 when every test runc passes is passed by sbxrun too, except
# the tests listed in hack/conformance-expected-failures.txt; 1 otherwise;
# 2 on setup errors.
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$PWD
export PATH="$PATH:/usr/local/go/bin"
export GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"

RUNTIME_TOOLS_VERSION=v0.9.0
RUNTIME_SPEC_VERSION=v1.0.2
# runtimetest calls label.FileLabel, removed from go-selinux after v1.10.x.
SELINUX_VERSION=v1.10.2

SBXRUN=${SBXRUN:-$repo/bin/sbxrun}
RUNC=${RUNC:-/usr/bin/runc}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
XFAIL_FILE=$repo/hack/conformance-expected-failures.txt
CACHE=$repo/hack/.cache/conformance

die() { echo "conformance: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || die "run as root (the reference runc and sbxrun create real containers)"
for c in go unshare timeout tar; do command -v "$c" >/dev/null || die "$c not found"; done
[ -x "$RUNC" ] || die "reference runtime $RUNC not found (apt-get install runc)"
[ -x "$SBXRUN" ] || die "$SBXRUN not found (make build)"
SBXRUN=$(readlink -f "$SBXRUN")

start_time=$(date +%s)

# --- build --------------------------------------------------------------
mod=$CACHE/src
bin=$CACHE/bin
if [ -n "${RUNTIME_TOOLS_SRC:-}" ]; then
	RUNTIME_TOOLS_SRC=$(readlink -f "$RUNTIME_TOOLS_SRC")
	mod=$CACHE/src-local bin=$CACHE/bin-local
fi
mkdir -p "$mod" "$bin"
cat >"$mod/go.mod" <<EOF
module sbxrun.invalid/conformance

go 1.21

require (
	github.com/opencontainers/runtime-tools $RUNTIME_TOOLS_VERSION
	github.com/opencontainers/runtime-spec $RUNTIME_SPEC_VERSION
	github.com/opencontainers/selinux $SELINUX_VERSION
	github.com/blang/semver v3.5.1+incompatible
	github.com/hashicorp/go-multierror v1.1.1
	github.com/mndrix/tap-go v0.0.0-20171203230836-629fa407e90b
	github.com/mrunalp/fileutils v0.5.1
	github.com/satori/go.uuid v1.2.0
	github.com/sirupsen/logrus v1.10.2
	github.com/syndtr/gocapability v0.0.0-20200815063812-42c35b437635
	github.com/urfave/cli v1.22.17
	github.com/xeipuuv/gojsonschema v1.2.0
)
EOF
if [ -n "${RUNTIME_TOOLS_SRC:-}" ]; then
	echo "replace github.com/opencontainers/runtime-tools => $RUNTIME_TOOLS_SRC" >>"$mod/go.mod"
	echo "conformance: WARNING: runtime-tools built from $RUNTIME_TOOLS_SRC, not the pristine $RUNTIME_TOOLS_VERSION" >&2
fi
cat >"$mod/tools.go" <<'EOF'
//go:build tools

// Package tools only pins the runtime-tools programs this module builds.
package tools

import (
	_ "github.com/opencontainers/runtime-tools/cmd/runtimetest"
	_ "github.com/opencontainers/runtime-tools/validation/util"
)
EOF
echo "conformance: building runtime-tools $RUNTIME_TOOLS_VERSION (runtime-spec $RUNTIME_SPEC_VERSION) in $mod" >&2
(cd "$mod" && go mod tidy >/dev/null 2>"$CACHE/build.log") ||
	{ cat "$CACHE/build.log" >&2; die "go mod tidy failed for runtime-tools $RUNTIME_TOOLS_VERSION"; }
src=$(cd "$mod" && go list -m -f '{{.Dir}}' github.com/opencontainers/runtime-tools)
[ -d "$src/validation" ] || die "runtime-tools source not found in the module cache"
pkg=github.com/opencontainers/runtime-tools
all_tests=()
for d in "$src"/validation/*/; do
	t=$(basename "$d")
	[ "$t" = util ] || all_tests+=("$t")
done
pkgs=()
for t in "${all_tests[@]}"; do pkgs+=("$pkg/validation/$t"); done
# One binary per validation/<test> package, named after the test.
(cd "$mod" &&
	CGO_ENABLED=0 go build -o "$bin/runtimetest" "$pkg/cmd/runtimetest" &&
	go build -o "$bin/" "${pkgs[@]}") >"$CACHE/build.log" 2>&1 ||
	{ cat "$CACHE/build.log" >&2; die "building the validation programs failed"; }

if [ $# -gt 0 ]; then
	tests=("$@")
	for t in "${tests[@]}"; do [ -x "$bin/$t" ] || die "no such validation test: $t"; done
else
	tests=("${all_tests[@]}")
fi

# --- expected failures ---------------------------------------------------
declare -A xfail=()
if [ -f "$XFAIL_FILE" ]; then
	while read -r name reason; do
		case $name in '' | '#'*) continue ;; esac
		xfail[$name]=${reason:-"(no reason given)"}
		[ -x "$bin/$name" ] || echo "conformance: warning: expected failure for unknown test $name" >&2
	done <"$XFAIL_FILE"
fi

# --- work area -----------------------------------------------------------
work=$(mktemp -d /tmp/sbxrun-conformance.XXXXXX)
# Bundles live below here; let user-namespaced container roots traverse it
# (the bundles themselves are 0700, as runtime-tools creates them).
chmod 0755 "$work"
# The cgroup tests use the fixed cgroupsPath /cgrouptest and the relative
# testdir/cgrouptest/container. Deleting a container removes only its leaf
# cgroup, so the empty parents testdir/cgrouptest stay behind for every
# runtime: remove them at the end if this run created them.
cg_pre=0
[ ! -d /sys/fs/cgroup/pids/testdir ] || cg_pre=1
cleanup() {
	local rt d
	for rt in runc sbxrun; do reap "$rt" 2>/dev/null || true; done
	if [ "$cg_pre" = 0 ]; then
		for d in /sys/fs/cgroup/*/testdir; do
			[ ! -d "$d" ] || rmdir "$d/cgrouptest" "$d" 2>/dev/null || true
		done
	fi
	if [ "${KEEP:-}" = 1 ]; then echo "conformance: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# Each runtime gets a wrapper (validation/util calls "$RUNTIME create ..."
# without global flags), a private state root and its own working directory
# holding runtimetest and the rootfs tarball, which the tests expect in cwd.
for rt in runc sbxrun; do
	mkdir -p "$work/$rt/state" "$work/$rt/cwd" "$work/$rt/tmp" "$work/$rt/out"
	cp "$bin/runtimetest" "$work/$rt/cwd/runtimetest"
	install -m 0644 "$src/rootfs-amd64.tar.gz" "$work/$rt/cwd/rootfs-amd64.tar.gz"
done
cat >"$work/runc/runtime" <<EOF
#!/bin/sh
exec "$RUNC" --root "$work/runc/state" "\$@"
EOF
# sbxrun: private state, config (no system default tier: the spec runs as
# given) and audit log, so nothing from the host's /etc/sbxrun applies.
mkdir -p "$work/sbxrun/config" "$work/sbxrun/statedir"
cat >"$work/sbxrun/runtime" <<EOF
#!/bin/sh
exec "$SBXRUN" --root "$work/sbxrun/state" --config-dir "$work/sbxrun/config" \
	--state-dir "$work/sbxrun/statedir" --audit-log "$work/sbxrun/audit.jsonl" "\$@"
EOF
chmod 0755 "$work/runc/runtime" "$work/sbxrun/runtime"

# reap RT TEST: force-delete what TEST left in RT's state root. Containers
# left behind are the test's doing; a hidden file (sbxrun's create journal,
# .create-ID.json, which must not outlive a create) is recorded as stray, and
# anything delete --force cannot remove (state, or the test's named cgroup)
# is recorded as a leftover.
reap() {
	local rt=$1 t=${2:-} state=$work/$1/state out=$work/$1/out p e id entries
	[ -d "$state" ] || return 0
	entries=()
	for p in "$state"/* "$state"/.[!.]*; do [ -e "$p" ] && entries+=("${p##*/}"); done
	for e in "${entries[@]}"; do
		[ -z "$t" ] || [ "${e:0:1}" != . ] || echo "$e" >>"$out/$t.stray"
		id=${e#.create-} id=${id%.json}
		echo "conformance: ${t:-exit}: $rt delete --force $id" >>"$out/reap.log"
		"$work/$rt/runtime" delete --force "$id" >>"$out/reap.log" 2>&1 || true
	done
	entries=()
	for p in "$state"/* "$state"/.[!.]*; do [ -e "$p" ] && entries+=("${p##*/}"); done
	# A container cgroup the test named must be gone after delete. Counted
	# only when the test exited 0: a test that dies in util.Fatal skips its
	# own cleanup (delete_only_create_resources makes pids/cgrouptest itself).
	for p in /sys/fs/cgroup/*/cgrouptest /sys/fs/cgroup/*/testdir/cgrouptest/container; do
		[ -d "$p" ] || continue
		[ -z "$t" ] || [ "$(cat "$out/$t.rc")" != 0 ] || entries+=("cgroup:${p#/sys/fs/cgroup/}")
		rmdir "$p" 2>/dev/null || true
	done
	if [ ${#entries[@]} -gt 0 ]; then
		[ -z "$t" ] || printf '%s\n' "${entries[@]}" >"$out/$t.leftover"
		rm -rf "${state:?}"/* "$state"/.[!.]* 2>/dev/null || true
	fi
}

# run_test RT TEST: run one validation program; leaves TEST.tap, TEST.err
# and TEST.rc (exit status; 124 = timeout) in $work/RT/out.
run_test() {
	local rt=$1 t=$2 rc=0 out=$work/$1/out
	(cd "$work/$rt/cwd" &&
		TMPDIR=$work/$rt/tmp RUNTIME=$work/$rt/runtime \
			timeout -k 5 "$TEST_TIMEOUT" unshare -m --propagation private "$bin/$t") \
		>"$out/$t.tap" 2>"$out/$t.err" </dev/null || rc=$?
	echo "$rc" >"$out/$t.rc"
	reap "$rt" "$t"
	rm -rf "${work:?}/$rt/tmp/"*
}

# verdict RT TEST: prints "pass|fail<TAB>summary". runtime-tools reports in
# three ways, so a test passes when its exit status is 0 and:
#   - it printed TAP points: plans (summed over its TAP streams) that match
#     the points reported, and no "not ok";
#   - it printed a plan of 0 (hooks tests): no "error" diagnostic in the YAML;
#   - it printed nothing (the *_fail tests, which expect create to fail).
# A non-zero exit (util.Fatal, a panic) fails, whatever the TAP said.
verdict() {
	local out=$work/$1/out t=$2 rc okn notok skip plan counts
	rc=$(cat "$out/$t.rc")
	okn=$(grep -cE '^ok [0-9]+' "$out/$t.tap" || true)
	notok=$(grep -cE '^not ok [0-9]+' "$out/$t.tap" || true)
	skip=$(grep -cE '^ok [0-9]+.*# ?SKIP' "$out/$t.tap" || true)
	# A program may print several TAP streams (linux_cgroups_cpus): add the plans.
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$out/$t.tap" | awk '{s += $1; n++} END {if (n) print s}')
	counts="$((okn - skip))/$notok/$skip"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		printf 'fail\ttimeout %s\n' "$counts"
	elif [ "$rc" != 0 ]; then
		printf 'fail\texit %s %s\n' "$rc" "$counts"
	elif [ ! -s "$out/$t.tap" ]; then
		printf 'pass\texit 0, no TAP\n'
	elif [ -z "$plan" ]; then
		printf 'fail\tno TAP plan %s\n' "$counts"
	elif [ "$notok" -gt 0 ] || [ $((okn + notok)) -ne "$plan" ]; then
		printf 'fail\t%s\n' "$counts"
	elif [ "$plan" = 0 ] && grep -qE '^ +"error":' "$out/$t.tap"; then
		printf 'fail\t0 points, error diag\n'
	elif [ "$plan" = 0 ]; then
		printf 'pass\t0 points, no error\n'
	else
		printf 'pass\t%s\n' "$counts"
	fi
}

echo "conformance: ${#tests[@]} tests x 2 runtimes, timeout ${TEST_TIMEOUT}s each; work dir $work" >&2
for t in "${tests[@]}"; do
	for rt in runc sbxrun; do
		printf 'conformance: %-40s %s\n' "$t" "$rt" >&2
		run_test "$rt" "$t"
	done
done

# --- report --------------------------------------------------------------
regressions=() xpass=() runc_pass=0 sbx_pass=0
report=$work/report.txt
{
	echo "runtime-tools $RUNTIME_TOOLS_VERSION; runc: $("$RUNC" --version | head -1); sbxrun: $("$SBXRUN" --version 2>/dev/null | head -1)"
	[ -z "${RUNTIME_TOOLS_SRC:-}" ] || echo "WARNING: suite built from $RUNTIME_TOOLS_SRC, not the pristine $RUNTIME_TOOLS_VERSION"
	echo "counts are ok/not-ok/skip TAP points"
	printf '%-32s %-4s %-22s %-4s %-22s %s\n' TEST RUNC "" SBXRUN "" NOTE
	for t in "${tests[@]}"; do
		IFS=$'\t' read -r rv rs <<<"$(verdict runc "$t")"
		IFS=$'\t' read -r sv ss <<<"$(verdict sbxrun "$t")"
		note=
		[ "$rv" = pass ] && runc_pass=$((runc_pass + 1))
		[ "$sv" = pass ] && sbx_pass=$((sbx_pass + 1))
		if [ "$sv" = fail ]; then
			if [ -n "${xfail[$t]:-}" ]; then
				note="expected: ${xfail[$t]}"
			elif [ "$rv" = pass ]; then
				note="REGRESSION: runc passes, sbxrun fails"
				regressions+=("$t")
			else
				note="UNLISTED: fails for both; add to $(basename "$XFAIL_FILE")"
			fi
		elif [ -n "${xfail[$t]:-}" ]; then
			note="XPASS: listed as expected failure but passes; remove it"
			xpass+=("$t")
		fi
		for rt in runc sbxrun; do
			if [ -s "$work/$rt/out/$t.stray" ]; then
				note="$note [$rt left $(wc -l <"$work/$rt/out/$t.stray") stray state file(s)]"
			fi
			if [ -s "$work/$rt/out/$t.leftover" ]; then
				note="$note [$rt left after delete --force: $(tr '\n' ' ' <"$work/$rt/out/$t.leftover")]"
			fi
		done
		printf '%-32s %-4s %-22s %-4s %-22s %s\n' "$t" "$rv" "$rs" "$sv" "$ss" "$note"
	done
	elapsed=$(($(date +%s) - start_time))
	echo
	echo "passed: runc $runc_pass/${#tests[@]}, sbxrun $sbx_pass/${#tests[@]}; time ${elapsed}s"
} >"$report"

# Details for every test sbxrun fails: the runtime's first error line and
# the TAP points runc passes and sbxrun does not (by description).
for t in "${tests[@]}"; do
	[ "$(verdict sbxrun "$t" | cut -f1)" = fail ] || continue
	echo
	echo "$t (sbxrun):"
	# The runtime's error is on the test's stderr or in a TAP YAML "stderr".
	{ grep -m1 -E '^sbxrun: ' "$work/sbxrun/out/$t.err" ||
		grep -m1 -oE '"stderr": "sbxrun: [^"]*' "$work/sbxrun/out/$t.tap" | sed 's/^"stderr": "//'; } |
		cut -c1-300 | sed 's/^/  error: /' || true
	diffs=$(comm -23 \
		<(sed -n 's/^ok [0-9]* - //p' "$work/runc/out/$t.tap" | sort -u) \
		<(sed -n 's/^ok [0-9]* - //p' "$work/sbxrun/out/$t.tap" | sort -u))
	if [ -n "$diffs" ]; then
		n=$(printf '%s\n' "$diffs" | wc -l)
		echo "  $n TAP points ok for runc, not for sbxrun:"
		printf '%s\n' "$diffs" | head -5 | cut -c1-200 | sed 's/^/    - /'
		[ "$n" -le 5 ] || echo "    ... ($((n - 5)) more)"
	fi
done >>"$report"
cat "$report"

if [ ${#regressions[@]} -gt 0 ]; then
	echo
	echo "conformance: FAIL: sbxrun fails tests that runc passes: ${regressions[*]}" >&2
	if [ "${KEEP:-}" = 1 ]; then
		echo "conformance: TAP output and stderr: $work/{runc,sbxrun}/out/TEST.{tap,err}" >&2
	else
		echo "conformance: rerun with KEEP=1 to keep the TAP output and stderr of each test" >&2
	fi
	exit 1
fi
[ ${#xpass[@]} -eq 0 ] || echo "conformance: note: unexpected passes: ${xpass[*]}" >&2
echo "conformance: ok" >&2
