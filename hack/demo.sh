#!/bin/bash
# The demo: install what is needed, build sbxrun, build a busybox rootfs,
# compile the strict tier into an OCI spec, and run commands in it with
# sbxrun as the runtime, printing what was blocked and what still works.
# Usage (as root): hack/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
hack/deps.sh
make build >/dev/null
work=$(mktemp -d /tmp/sbxrun-demo.XXXXXX)
chmod 755 "$work"
trap 'bin/sbxrun --root "$work/run" delete --force demo >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
hack/mkrootfs.sh "$work/bundle/rootfs"
# A second program in the image, as a dropped payload would be: strict
# lets only the initial program (the shell) execute.
mkdir -p "$work/bundle/rootfs/usr/local/bin"
cp "$work/bundle/rootfs/bin/busybox" "$work/bundle/rootfs/usr/local/bin/payload"
export SBXRUN_STATE_DIR="$work/state" SBXRUN_CONFIG_DIR="$work/conf"
# A secret in the caller's environment: the strict tier must not pass it on.
export GITHUB_TOKEN=ghp_demo_secret_value
cat > "$work/bundle/demo.sh" <<'SCRIPT'
check() { # check "what" expected(blocked|works) command...
  what=$1; want=$2; shift 2
  if out=$("$@" 2>&1); then got=works; else got=blocked; fi
  mark=ok; [ "$got" = "$want" ] || mark=UNEXPECTED
  printf '%-9s %-46s %s\n' "$got" "$what" "[$mark] $(echo "$out" | head -1 | cut -c1-60)"
}
echo "== under tier strict (uid $(id -u)) =="
check "write to the rootfs"                  blocked sh -c 'echo x > /pwned'
check "mount a filesystem"                   blocked mount -t tmpfs none /tmp
check "create a user namespace"              blocked unshare -U true
check "reach the network (no interface)"     blocked sh -c 'ls /sys/class/net | grep -qv "^lo$"'
check "see GITHUB_TOKEN from the caller"     blocked sh -c 'test -n "$GITHUB_TOKEN"'
check "read host /etc/shadow"                blocked cat /etc/shadow
check "write /dev/shm (IPC)"                 blocked sh -c 'echo x > /dev/shm/x'
check "execute another program (payload)"    blocked /usr/local/bin/payload echo pwned
check "run a shell command"                  works   echo hello
check "use scratch space in /tmp"            works   sh -c 'echo data > /tmp/f && sha256sum /tmp/f'
check "list the image"                       works   ls /bin/busybox
SCRIPT
chmod 755 "$work/bundle/demo.sh"
cp "$work/bundle/demo.sh" "$work/bundle/rootfs/demo.sh"
echo "== sbxrun explain --tier strict =="
bin/sbxrun explain --tier strict | sed -n '1,10p'
echo
bin/sbxrun spec --tier strict --bundle "$work/bundle" -- /bin/sh /demo.sh 2>/dev/null
bin/sbxrun lint --tier strict "$work/bundle/config.json"
bin/sbxrun --root "$work/run" run --bundle "$work/bundle" demo
echo
echo "== audit log =="
bin/sbxrun log
