#!/bin/bash
# Time `sbxrun spec` as a whole process (start, compile, write, exit):
# median of N runs, printed in ms. Usage: hack/bench-spec.sh BIN [N]
set -euo pipefail
bin=${1:?usage: bench-spec.sh BIN [N]}; n=${2:-200}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export SBXRUN_STATE_DIR=$tmp/state SBXRUN_CONFIG_DIR=$tmp/conf
times=()
for _ in $(seq "$n"); do
  s=$(date +%s%N); "$bin" spec --tier strict --force -o /dev/null 2>/dev/null; e=$(date +%s%N)
  times+=($(( (e - s) / 1000 )))
done
med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
printf 'sbxrun spec --tier strict: median %d.%03d ms over %d runs\n' $((med / 1000)) $((med % 1000)) "$n"
