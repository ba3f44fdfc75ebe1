package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// result renders an error as its errno name ("OK" for none).
func result(err error) string {
	if err == nil {
		return "OK"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

func errnoOf(_, _ uintptr, e syscall.Errno) string {
	if e == 0 {
		return "OK"
	}
	return unix.ErrnoName(e)
}

func status() map[string]string {
	out := map[string]string{}
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// interfaces lists network interfaces from /proc/net/dev: procfs works in
// every tier, where netlink sockets may be refused.
func interfaces() []string {
	b, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return []string{"error: " + result(err)}
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n")[2:] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}

func writeFile(p string) string {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return result(err)
	}
	defer os.Remove(p)
	_, err = f.Write([]byte("x"))
	f.Close()
	return result(err)
}

func readLen(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return result(err)
	}
	if len(b) == 0 {
		return "EMPTY"
	}
	return "DATA"
}

// Personas passed to personality(2). readImpliesExec makes every later
// mapping executable (no NX) and is what the tiers refuse; queryPersona
// changes nothing and returns the current persona.
const (
	readImpliesExec = 0x0400000
	queryPersona    = 0xffffffff
)

// personality calls personality(persona) on a locked OS thread that is
// discarded afterwards (the persona is per thread), restoring the previous
// persona first if the call changed it, and reports the errno.
func personality(persona uintptr) string {
	done := make(chan string)
	go func() {
		// Never unlocked: the thread dies with this goroutine.
		lockThread()
		prev, _, e := unix.RawSyscall(unix.SYS_PERSONALITY, persona, 0, 0)
		if e == 0 && persona != queryPersona {
			unix.RawSyscall(unix.SYS_PERSONALITY, prev, 0, 0)
		}
		done <- errnoOf(0, 0, e)
	}()
	return <-done
}

// mountMode reports how the mount at exactly dir is mounted: "ro", "rw",
// or "none" when nothing is mounted there (from /proc/self/mountinfo).
func mountMode(dir string) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return result(err)
	}
	mode := "none"
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mountpoint options ...; the last
		// mount at a point is the one in effect.
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == dir {
			mode, _, _ = strings.Cut(f[5], ",")
		}
	}
	return mode
}

func main() {
	st := status()
	r := map[string]any{
		"uid":          os.Getuid(),
		"seccomp":      st["Seccomp"],
		"no_new_privs": st["NoNewPrivs"],
		"cap_eff":      st["CapEff"],
		"interfaces":   interfaces(),
		"rootfs_write": writeFile("/probe-write-test"),
		"tmp_write":    writeFile("/tmp/probe-write-test"),
		"shm_write":    writeFile("/dev/shm/probe-write-test"),
		"proc_masked":  readLen("/proc/timer_list"),
		"uid_map": func() string {
			b, _ := os.ReadFile("/proc/self/uid_map")
			return strings.Join(strings.Fields(string(b)), " ")
		}(),
		"proc_status": readLen("/proc/self/status"),
		// /proc/sys: a mitigation tunable, a kernel subdirectory, another
		// subtree, and the file every libcontainer init must read.
		"proc_sys_tunable":    readLen("/proc/sys/kernel/kptr_restrict"),
		"proc_sys_kernel_dir": readLen("/proc/sys/kernel/random/boot_id"),
		"proc_sys_subtree":    readLen("/proc/sys/vm/overcommit_memory"),
		"cap_last_cap":        readLen("/proc/sys/kernel/cap_last_cap"),
		"osrelease":           readLen("/proc/sys/kernel/osrelease"),
		"proc_sys_mount":      mountMode("/proc/sys"),
		"proc_sys_write": func() string {
			f, err := os.OpenFile("/proc/sys/kernel/domainname", os.O_WRONLY, 0)
			if err != nil {
				return result(err)
			}
			defer f.Close()
			_, err = f.Write([]byte("x"))
			return result(err)
		}(),
		"env": os.Environ(),
	}
	os.MkdirAll("/tmp/m", 0o700)
	r["mount"] = result(unix.Mount("tmpfs", "/tmp/m", "tmpfs", 0, ""))
	unix.Unmount("/tmp/m", unix.MNT_DETACH)
	// unshare in a locked OS thread that is then discarded: a successful
	// unshare changes only that thread.
	done := make(chan string)
	go func() {
		// Never unlocked: the thread dies with this goroutine.
		lockThread()
		done <- result(unix.Unshare(unix.CLONE_NEWUSER))
	}()
	r["unshare_user"] = <-done
	// clone with CLONE_NEWUSER, as a fork+exec: the filter checks clone's
	// flags argument.
	child := exec.Command("/bin/true")
	child.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	r["clone_newuser"] = result(child.Run())
	const keyctlGetKeyringID, keySpecSessionKeyring = 0, ^uintptr(2) // -3
	r["keyctl"] = errnoOf(unix.Syscall(unix.SYS_KEYCTL, keyctlGetKeyringID, keySpecSessionKeyring, 0))
	r["ptrace"] = errnoOf(unix.Syscall(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 999999, 0))
	var ts unix.Timespec
	r["unlisted_syscall"] = errnoOf(unix.Syscall(unix.SYS_SCHED_RR_GET_INTERVAL, 0, uintptr(unsafe.Pointer(&ts)), 0))
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
		unix.Close(fd)
		r["socket_inet"] = "OK"
	} else {
		r["socket_inet"] = result(err)
	}
	if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
		unix.Close(fd)
		r["socket_unix"] = "OK"
	} else {
		r["socket_unix"] = result(err)
	}
	id, _, e := unix.Syscall(unix.SYS_SHMGET, 0 /* IPC_PRIVATE */, 4096, 0o1000|0o600 /* IPC_CREAT */)
	r["sysv_shm"] = errnoOf(0, 0, e)
	if e == 0 {
		unix.Syscall(unix.SYS_SHMCTL, id, 0 /* IPC_RMID */, 0)
	}
	r["personality"] = personality(readImpliesExec)
	r["personality_query"] = personality(queryPersona)
	r["exec"] = result(exec.Command("/bin/true").Run())
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	enc.Encode(r)
}
