// Package policy compiles a tier and a config into Grants, the one
// intermediate form every backend reads (specgen for OCI specs, seatbelt
// for macOS profiles, enforce for incoming specs).
//
// Compile is pure: everything it needs to know about the machine comes in
// as HostFacts (probed once by package host), so the same tier, config and
// facts always give the same Grants, and tests can compile for any host.
//
// A config may narrow its tier freely. Anything that would grant more —
// a wider access level, a higher limit, an extra syscall, a credential name
// let through the environment filter — is a widening: refused with
// SANDBOX_POLICY_CONFLICT unless an Authorization (a verified override
// token) is passed, in which case the widenings are recorded in
// Grants.Override for the audit log. A config that contradicts itself or
// its tier (a write path outside the read paths, a path no tier may mount,
// an rlimit above the host's hard limit) is a conflict no override can
// authorize; a malformed one is SANDBOX_CONFIG_INVALID.
//
// Protections a generated artifact cannot carry by itself are listed in
// Grants.Unenforced with what enforces them instead, so that every caller
// prints and audits them rather than implying they hold.
package policy
