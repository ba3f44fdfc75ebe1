// Command probe runs inside a Linux sandbox and reports, as one JSON object
// on stdout, what the sandbox lets it do: its seccomp and privilege state,
// and the errno of each operation a tier may deny. The integration tests
// build it statically, copy it into a rootfs and assert on the report.
// It exists only for Linux; elsewhere it is an empty program.
package main
