#!/bin/sh
# Build a minimal busybox rootfs for tests and the demo, from Debian's
# busybox-static (no registry needed). Usage: hack/mkrootfs.sh DIR
set -eu
dir=${1:?usage: mkrootfs.sh DIR}
bb=$(command -v busybox || true)
[ -n "$bb" ] || { echo "mkrootfs: busybox not found (apt-get install busybox-static)" >&2; exit 1; }
if ! file -L "$bb" 2>/dev/null | grep -q 'statically linked' && ldd "$bb" >/dev/null 2>&1; then
  echo "mkrootfs: $bb is dynamically linked; install busybox-static" >&2; exit 1
fi
mkdir -p "$dir/bin" "$dir/etc" "$dir/proc" "$dir/sys" "$dir/dev" "$dir/tmp" "$dir/root" "$dir/run"
cp "$bb" "$dir/bin/busybox"
for applet in $("$bb" --list); do
  [ -e "$dir/bin/$applet" ] || ln -s busybox "$dir/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$dir/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' > "$dir/etc/group"
chmod 1777 "$dir/tmp"
