#!/bin/bash
# Container benchmarks, in one run (as root):
#   1. start-to-exit latency of busybox `true`: sbxrun, runc 1.1.5 (apt),
#      runc v1.5.2 (built from the Go module proxy into hack/.cache, never
#      committed) and bubblewrap; same rootfs, same strict spec (from
#      `sbxrun spec --tier strict`) for the OCI runtimes, each runtime with
#      its own private --root;
#   2. `ctr run --rm` through containerd's runc v2 shim driving sbxrun,
#      runc v1.5.2 and runc 1.1.5 (private containerd: socket, root, state);
#   3. seccomp overhead of a syscall-bound loop (busybox dd bs=1): strict
#      spec vs the same spec without linux.seccomp, and vs an allow-all
#      filter (the kernel's fixed cost of having any filter), via sbxrun;
#      moby's default profile vs none via runc v1.5.2.
# Runs are interleaved (round robin, the starting runtime rotating each
# iteration) after a warm-up round; medians, quartiles and ratios are printed.
#
# Usage: hack/bench.sh [SBXRUN-BINARY]          (default bin/sbxrun)
# Environment:
#   N=50          iterations for parts 1 and 2
#   N_SECCOMP=20  iterations for part 3 (each dd run takes about 0.5 s)
#   DD_COUNT=2000000  bytes copied one at a time by dd (2 syscalls each)
#   PARTS="start ctr seccomp"  which parts to run
#   KEEP_SAMPLES=DIR  copy the raw samples (µs, one per line) to DIR
set -euo pipefail
export LC_ALL=C
export PATH=$PATH:/usr/local/go/bin:/usr/sbin:/sbin

repo=$(cd "$(dirname "$0")/.." && pwd)
sbx=$(realpath -m "${1:-$repo/bin/sbxrun}")
N=${N:-50}
N_SECCOMP=${N_SECCOMP:-20}
DD_COUNT=${DD_COUNT:-2000000}
PARTS=${PARTS:-start ctr seccomp}
cache=$repo/hack/.cache
runc152_version=v1.5.2
moby_version=v0.2.3

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (containers, cgroups, containerd)"
[ -x "$sbx" ] || die "$sbx not found: run make build"
for c in runc bwrap containerd ctr jq busybox; do
  command -v "$c" >/dev/null || { echo "bench: $c missing; installing the packages (hack/deps.sh)" >&2; "$repo/hack/deps.sh"; break; }
done
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

tmp=$(mktemp -d /tmp/sbxrun-bench.XXXXXX)
tag=bench$$
cd_pid=''
run_containerd_preexisted=1
[ -e /run/containerd ] || run_containerd_preexisted=0

cleanup() {
  set +eu
  local r id
  for r in "$tmp"/root-*; do
    [ -d "$r" ] || continue
    for id in "$r"/*; do
      [ -d "$id" ] || continue
      id=${id##*/}
      case $r in
        *-sbxrun) "$sbx" --root "$r" delete --force "$id" ;;
        *-runc115) runc --root "$r" delete --force "$id" ;;
        *) "$runc152" --root "$r" delete --force "$id" ;;
      esac
    done >/dev/null 2>&1
  done
  if [ -n "$cd_pid" ]; then
    kill -TERM "$cd_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$cd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$cd_pid" 2>/dev/null
    wait "$cd_pid" 2>/dev/null
  fi
  # Shims started for our socket (matched by its unique path, killed by pid).
  local p
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "$tmp/containerd/"; then
      kill -KILL "${p#/proc/}" 2>/dev/null
    fi
  done
  # Anything still mounted under the temp dir (none expected), deepest first.
  awk -v t="$tmp" '$5 ~ "^"t {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m"; done
  # Cgroups of our containers: libcontainer uses /<id>, containerd /<namespace>/<id>.
  local d
  for d in /sys/fs/cgroup/*/"$tag"-* /sys/fs/cgroup/*/"$tag"/* /sys/fs/cgroup/*/"$tag" \
           /sys/fs/cgroup/*/*/"$tag"-* /sys/fs/cgroup/*/*/"$tag"/* /sys/fs/cgroup/*/*/"$tag"; do
    [ -d "$d" ] && rmdir "$d" 2>/dev/null
  done
  # containerd 1.6 creates /run/containerd (shim sockets, fifos) whatever
  # its config says; remove what is left of it if it was not there before
  # (empty directories only: another daemon may have started meanwhile).
  if [ "$run_containerd_preexisted" = 0 ] && [ -d /run/containerd ]; then
    find /run/containerd -depth -type d -empty -delete 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- peers -------------------------------------------------------------------
runc115=$(command -v runc)
runc152=$cache/runc-$runc152_version/runc
if [ ! -x "$runc152" ]; then
  echo "bench: building runc $runc152_version from the Go module proxy into $cache (once)" >&2
  gobin=$(mktemp -d)
  CGO_ENABLED=1 GOBIN=$gobin GOFLAGS=-mod=mod go install -tags seccomp "github.com/opencontainers/runc@$runc152_version"
  mkdir -p "$(dirname "$runc152")" && mv "$gobin/runc" "$runc152" && rmdir "$gobin"
fi

# moby's default seccomp profile, converted to an OCI linux.seccomp section
# by the module's own GetDefaultProfile (for the spec's capabilities), from a
# throwaway module under hack/.cache (Go module proxy only).
moby_tool=$cache/moby-seccomp-$moby_version/moby-seccomp
build_moby_tool() {
  local src=$cache/moby-seccomp-$moby_version/src
  mkdir -p "$src"
  cat >"$src/main.go" <<'EOF'
// Reads an OCI config.json on stdin, prints moby's default seccomp profile
// as the linux.seccomp section for that spec's capabilities.
package main

import (
	"encoding/json"
	"os"

	"github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func main() {
	var s specs.Spec
	if err := json.NewDecoder(os.Stdin).Decode(&s); err != nil {
		panic(err)
	}
	p, err := seccomp.GetDefaultProfile(&s)
	if err != nil {
		panic(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(p); err != nil {
		panic(err)
	}
}
EOF
  (cd "$src" && rm -f go.mod go.sum && go mod init benchtool/mobyseccomp >/dev/null 2>&1 &&
    go get "github.com/moby/profiles/seccomp@$moby_version" >/dev/null 2>&1 &&
    go mod tidy >/dev/null 2>&1 && CGO_ENABLED=0 go build -o "$moby_tool" .)
}

# --- bundles -----------------------------------------------------------------
export SBXRUN_STATE_DIR=$tmp/sbxrun-state SBXRUN_CONFIG_DIR=$tmp/sbxrun-config
bundle=$tmp/bundle
rootfs=$bundle/rootfs
"$repo/hack/mkrootfs.sh" "$rootfs"
"$sbx" spec --tier strict --bundle "$bundle" -- /bin/true 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; die "sbxrun spec --tier strict failed"; }
[ "$(jq -r .root.path "$bundle/config.json")" = rootfs ] || die "unexpected root.path in the strict spec"

# mkbundle NAME JQ-FILTER: a bundle sharing the rootfs, spec edited by jq.
mkbundle() {
  mkdir -p "$tmp/$1"
  jq --arg rootfs "$rootfs" ".root.path = \$rootfs | $2" "$bundle/config.json" >"$tmp/$1/config.json"
}

# --- measurement -------------------------------------------------------------
samples=$tmp/samples
mkdir -p "$samples"
seq_no=0
# timed SERIES CMD...: run CMD once, append its wall time (µs) to SERIES.
timed() {
  local series=$1; shift
  local s e rc=0
  s=$EPOCHREALTIME
  "$@" </dev/null >/dev/null 2>"$tmp/err" || rc=$?
  e=$EPOCHREALTIME
  if [ "$rc" -ne 0 ]; then
    echo "bench: $series failed (exit $rc): $*" >&2; cat "$tmp/err" >&2; exit 1
  fi
  echo $(( ${e/./} - ${s/./} )) >>"$samples/$series"
}
nextid() { seq_no=$((seq_no + 1)); id=$tag-$seq_no; }

# One container run per runtime name; "$id" must be set.
run_start() {
  case $1 in
    sbxrun)     "$sbx" --root "$tmp/root-sbxrun" run --bundle "$2" "$id" ;;
    runc-1.1.5) "$runc115" --root "$tmp/root-runc115" run --bundle "$2" "$id" ;;
    runc-1.5.2) "$runc152" --root "$tmp/root-runc152" run --bundle "$2" "$id" ;;
    bwrap)      bwrap --unshare-all --ro-bind "$rootfs" / --proc /proc --dev /dev /bin/true ;;
  esac
}

# interleave ITER WARMUP SERIES...: round robin over SERIES (each "name"
# calls bench_one name), rotating the first series each iteration.
interleave() {
  local iters=$1 warm=$2; shift 2
  local names=("$@") i j
  local k=${#names[@]}
  for ((i = -warm; i < iters; i++)); do
    for ((j = 0; j < k; j++)); do
      local name=${names[$(( ((i + warm) + j) % k ))]}
      nextid
      if [ "$i" -lt 0 ]; then bench_one "$name" warmup; else bench_one "$name" "$name"; fi
    done
    rm -f "$samples/warmup"
  done
}

# stats SERIES: median p25 p75 min (µs)
stats() {
  sort -n "$samples/$1" | awk '
    function q(p,  h, l) { h = (NR - 1) * p + 1; l = int(h); return a[l] + (h - l) * (a[l + (l < NR)] - a[l]) }
    {a[NR] = $1} END {printf "%d %d %d %d %d\n", q(0.5), q(0.25), q(0.75), a[1], NR}'
}
med() { stats "$1" | cut -d' ' -f1; }
ms() { awk -v u="$1" 'BEGIN {printf "%.1f", u / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f×", a / b; else print "-"}'; }
ratio3() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.3f×", a / b; else print "-"}'; }

# table REF SERIES...: one row per series, ratio of medians vs REF.
table() {
  local ref=$1 refmed s m p25 p75 mn n; shift
  refmed=$(med "$ref")
  printf '  %-34s %9s %9s %9s %9s %5s  %s\n' series median p25 p75 min n "vs $ref"
  for s in "$@"; do
    read -r m p25 p75 mn n <<<"$(stats "$s")"
    printf '  %-34s %9s %9s %9s %9s %5s  %s\n' "$s" "$(ms "$m")" "$(ms "$p25")" "$(ms "$p75")" "$(ms "$mn")" "$n" "$(ratio "$m" "$refmed")"
  done
}

echo "sbxrun bench: $("$sbx" --version 2>/dev/null | head -1); $("$runc115" --version | head -1); $("$runc152" --version | head -1); $(bwrap --version)"
echo "  kernel $(uname -r), $(nproc) vCPU; times in ms (wall, fork+exec of the runtime to its exit)"
t0=$SECONDS

# --- 1. start latency --------------------------------------------------------
if has start; then
  bench_one() { timed "$2" run_start "$1" "$bundle"; }
  interleave "$N" 2 sbxrun runc-1.1.5 runc-1.5.2 bwrap
  echo
  echo "1. start-to-exit latency of busybox true (strict spec; N=$N interleaved)"
  table runc-1.5.2 sbxrun runc-1.1.5 runc-1.5.2 bwrap
  echo "  goal: sbxrun <= 0.80× runc-1.5.2 — now $(ratio "$(med sbxrun)" "$(med runc-1.5.2)")"
fi

# --- 2. ctr run --------------------------------------------------------------
if has ctr; then
  cdir=$tmp/containerd
  mkdir -p "$cdir"
  sock=$cdir/containerd.sock
  cat >"$cdir/config.toml" <<EOF
version = 2
root = "$cdir/root"
state = "$cdir/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$cdir/debug.sock"
EOF
  containerd --config "$cdir/config.toml" >"$cdir/log" 2>&1 &
  cd_pid=$!
  for _ in $(seq 100); do ctr --address "$sock" version >/dev/null 2>&1 && break; sleep 0.1; done
  ctr --address "$sock" version >/dev/null 2>&1 || { cat "$cdir/log" >&2; die "containerd did not come up"; }
  ctr_run() {
    ctr --address "$sock" --namespace "$tag" run --rm --rootfs --runc-binary "$1" --runc-root "$tmp/root-ctr-$2" "$rootfs" "$id" /bin/true
  }
  bench_one() {
    case $1 in
      ctr+sbxrun)     timed "$2" ctr_run "$sbx" sbxrun ;;
      ctr+runc-1.5.2) timed "$2" ctr_run "$runc152" runc152 ;;
      ctr+runc-1.1.5) timed "$2" ctr_run "$runc115" runc115 ;;
    esac
  }
  interleave "$N" 2 ctr+sbxrun ctr+runc-1.5.2 ctr+runc-1.1.5
  kill -TERM "$cd_pid"; wait "$cd_pid" 2>/dev/null || true; cd_pid=''
  echo
  echo "2. ctr run --rm --rootfs ... true through containerd 1.6's runc v2 shim (containerd's default spec; N=$N interleaved)"
  table ctr+runc-1.5.2 ctr+sbxrun ctr+runc-1.5.2 ctr+runc-1.1.5
fi

# --- 3. seccomp overhead -----------------------------------------------------
if has seccomp; then
  dd='.process.args = ["/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count='"$DD_COUNT"'"]'
  status='.process.args = ["/bin/grep", "^Seccomp", "/proc/self/status"]'
  # Without linux.seccomp the tier annotation must go too: sbxrun would
  # enforce the strict tier again and put the filter back.
  off='del(.linux.seccomp) | del(.annotations["dev.sbx.tier"])'
  mkbundle sc-strict-dd "$dd"
  mkbundle sc-strict-true '.'
  mkbundle sc-off-dd "$dd | $off"
  mkbundle sc-off-true "$off"
  mkbundle sc-strict-status "$status"
  mkbundle sc-off-status "$status | $off"
  # A filter that allows everything: every syscall is in the kernel's
  # action cache, so this is the floor any filter costs.
  allow='.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"]}'
  mkbundle sc-allow-dd "$dd | $off | $allow"
  mkbundle sc-allow-true "$off | $allow"
  mkbundle sc-allow-status "$status | $off | $allow"
  moby=ok
  if [ ! -x "$moby_tool" ] && ! build_moby_tool; then
    moby="could not build github.com/moby/profiles/seccomp@$moby_version from the Go module proxy"
  fi
  if [ "$moby" = ok ]; then
    "$moby_tool" <"$bundle/config.json" >"$tmp/moby.json"
    for b in dd true status; do
      case $b in dd) base=$dd ;; true) base=. ;; status) base=$status ;; esac
      mkdir -p "$tmp/sc-moby-$b"
      jq --arg rootfs "$rootfs" --slurpfile moby "$tmp/moby.json" \
        ".root.path = \$rootfs | $base | $off | .linux.seccomp = \$moby[0]" "$bundle/config.json" >"$tmp/sc-moby-$b/config.json"
    done
  fi
  # Sanity: the filter is there (Seccomp: 2) or not (0), as intended.
  check() {
    local got; nextid
    got=$(run_start "$1" "$tmp/$2" 2>/dev/null | awk '$1 == "Seccomp:" {print $2}')
    [ "$got" = "$3" ] || die "$1 with $2: Seccomp mode ${got:-?}, expected $3"
  }
  check sbxrun sc-strict-status 2
  check sbxrun sc-off-status 0
  check sbxrun sc-allow-status 2
  [ "$moby" = ok ] && { check runc-1.5.2 sc-moby-status 2; check runc-1.5.2 sc-off-status 0; }
  bench_one() {
    local rt=${1%%:*} b=${1#*:}
    timed "$2" run_start "$rt" "$tmp/$b"
  }
  series=(sbxrun:sc-strict-dd sbxrun:sc-allow-dd sbxrun:sc-off-dd sbxrun:sc-strict-true sbxrun:sc-allow-true sbxrun:sc-off-true)
  [ "$moby" = ok ] && series+=(runc-1.5.2:sc-moby-dd runc-1.5.2:sc-off-dd runc-1.5.2:sc-moby-true runc-1.5.2:sc-off-true)
  interleave "$N_SECCOMP" 1 "${series[@]}"
  echo
  echo "3. seccomp overhead: busybox dd if=/dev/zero of=/dev/null bs=1 count=$DD_COUNT (N=$N_SECCOMP interleaved)"
  table sbxrun:sc-off-dd "${series[@]}"
  # net = dd run minus true run under the same spec: the loop without start-up.
  pair() {
    local rt=$1 on=$2 label=$3 base=${4:-off}
    local a b ta tb
    a=$(med "$rt:sc-$on-dd"); b=$(med "$rt:sc-$base-dd"); ta=$(med "$rt:sc-$on-true"); tb=$(med "$rt:sc-$base-true")
    printf '  %-28s whole run %s (%s vs %s ms)   loop only %s (%s vs %s ms)\n' "$rt $label:" \
      "$(ratio3 "$a" "$b")" "$(ms "$a")" "$(ms "$b")" "$(ratio3 $((a - ta)) $((b - tb)))" "$(ms $((a - ta)))" "$(ms $((b - tb)))"
  }
  pair sbxrun strict "strict vs no filter"
  pair sbxrun allow "allow-all vs no filter"
  pair sbxrun strict "strict vs allow-all" allow
  if [ "$moby" = ok ]; then
    pair runc-1.5.2 moby "moby default vs no filter"
  else
    echo "  runc-1.5.2 with moby's default profile: skipped ($moby)"
  fi
  echo "  goal: strict loop overhead <= 1.02× (allow-all vs no filter is the kernel's floor for any filter)"
fi

if [ -n "${KEEP_SAMPLES:-}" ]; then mkdir -p "$KEEP_SAMPLES" && cp "$samples"/* "$KEEP_SAMPLES"/; fi
echo
echo "bench: done in $((SECONDS - t0)) s"
