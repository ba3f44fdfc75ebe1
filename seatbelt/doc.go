// Package seatbelt is the Darwin backend: it compiles policy.Grants into a
// seatbelt (SBPL) profile for /usr/bin/sandbox-exec, lints SBPL text, runs
// a command under a profile on macOS and reads the sandbox's denials back
// from the system log.
//
// Generation is pure and runs anywhere, so profiles are reviewed and
// golden-tested on Linux. A profile has a fixed shape:
//
//	(version 1)
//	(deny default (with message (param "RUN_TAG")))
//	bootstrap     what any process needs to start, identical for every tier
//	fs-read       fs_read: declared roots (and system directories at allow)
//	fs-write      fs_write: the per-run scratch directory, declared writable roots
//	process-exec  process_exec: the initial program only, or any program
//	ipc           ipc: POSIX semaphores (scoped), plus shared memory (allow)
//	network       network_access: nothing, the proxy port, or everything
//	capture       the capture preset's few services
//	protect       sensitive files, credential stores, agent configuration
//	root          the re-allow of reading "/" that dyld needs after the denies
//
// Within one operation the later rule wins, which is why the protective
// denies come last. Every machine-specific value (paths, the run tag, the
// ancestor directories of granted and protected paths) is a parameter:
// (param "PROJECT_ROOT") in the text and -DPROJECT_ROOT=… in the argv. The
// text is therefore byte-identical on every machine for the same Grants,
// and no path is ever parsed as SBPL, so a path holding `")` cannot inject
// rules. Paths are canonicalised first (~ expanded, symlinks resolved up to
// the nearest existing ancestor, /tmp, /var and /etc mapped to /private),
// because seatbelt matches resolved paths only.
//
// SBPL has no environment operation: the argv runs the command through
// /usr/bin/env -i with the Grants' already filtered variables.
//
// Lint checks any SBPL text against the pitfalls collected from other
// generators (docs/darwin.md lists them with the finding codes); Generate
// lints what it produces and fails rather than return a profile that does
// not pass.
//
// Run and StartMonitor work on darwin only; elsewhere they return
// ErrUnsupported. Run probes sandbox-exec before every run and fails
// closed: a missing tool, a caller that is already sandboxed or a rejected
// profile is an error, never an unsandboxed run.
package seatbelt
