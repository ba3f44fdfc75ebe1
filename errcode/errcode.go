// Package errcode holds sbxrun's stable error codes: the codes users and
// scripts branch on, the exit status each maps to, and the error type that
// carries one. It is a leaf: every package may import it, it imports none
// of sbxrun's. The list, with meanings, is docs/errors.md.
package errcode

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a stable error code.
type Code string

// Stable error codes.
const (
	// DowngradeBlocked: a connector would move to a less restrictive tier
	// without an override authorization.
	DowngradeBlocked Code = "SANDBOX_DOWNGRADE_BLOCKED"
	// ProfileUnknown: a tier name that is not in the catalog.
	ProfileUnknown Code = "SANDBOX_PROFILE_UNKNOWN"
	// PolicyConflict: a config contradicts itself or its tier, or widens
	// the tier without an override.
	PolicyConflict Code = "SANDBOX_POLICY_CONFLICT"
	// CompileError: the tier data cannot be compiled on this host or arch.
	CompileError Code = "SANDBOX_COMPILE_ERROR"
	// ConfigInvalid: a config, flag value, path, id or annotation could not
	// be parsed or is malformed (as opposed to well-formed but refused).
	ConfigInvalid Code = "SANDBOX_CONFIG_INVALID"
	// OverrideInvalid: an override token was presented but is unknown,
	// expired, used up, or the token store is not trustworthy.
	OverrideInvalid Code = "SANDBOX_OVERRIDE_INVALID"
	// SpecNoncompliant: an OCI spec violates a tier (lint, enforce).
	SpecNoncompliant Code = "SANDBOX_SPEC_NONCOMPLIANT"
	// SpecInvalid: an OCI spec or process could not be read or parsed, or
	// asks for what no runtime can give (no args, a rootfs symlinked out of
	// the bundle, an rlimit above the host's hard limit).
	SpecInvalid Code = "SANDBOX_SPEC_INVALID"
	// AuditTampered: the audit log's hash chain does not verify.
	AuditTampered Code = "SANDBOX_AUDIT_TAMPERED"
	// StateUntrusted: persistent state that decides a tier (bindings,
	// runtime.yaml) is corrupt, or could have been written by someone other
	// than its owner, so it is not used.
	StateUntrusted Code = "SANDBOX_STATE_UNTRUSTED"
	// Unenforceable: a protection the tier requires cannot be applied on
	// this host or build, so the sandbox is refused rather than run with less.
	Unenforceable Code = "SANDBOX_UNENFORCEABLE"
	// NotFound: no container has that id.
	NotFound Code = "SANDBOX_NOT_FOUND"
	// StateConflict: the container's state does not allow the verb (an id
	// already in use, start of a running container, delete of a running one
	// without --force).
	StateConflict Code = "SANDBOX_STATE_CONFLICT"
	// Internal: an I/O or system failure not caused by the input.
	Internal Code = "SANDBOX_INTERNAL"
)

// All lists every code, in the order of docs/errors.md.
var All = []Code{ProfileUnknown, ConfigInvalid, SpecInvalid, NotFound, StateConflict, DowngradeBlocked,
	PolicyConflict, OverrideInvalid, Unenforceable, CompileError, SpecNoncompliant, AuditTampered,
	StateUntrusted, Internal}

// ExitStatus maps a code to the process exit status the CLI uses.
func (c Code) ExitStatus() int {
	switch c {
	case ProfileUnknown, ConfigInvalid, SpecInvalid, NotFound, StateConflict:
		return 2
	case DowngradeBlocked, PolicyConflict, OverrideInvalid, Unenforceable:
		return 3
	case CompileError:
		return 4
	case SpecNoncompliant:
		return 5
	case AuditTampered, StateUntrusted:
		return 6
	default:
		return 1
	}
}

// Error is an error with a stable code and a one-line message. Details are
// further lines (e.g. each conflict) shown below the message.
type Error struct {
	Code    Code
	Msg     string
	Details []string
	// Err is the underlying error, if any, for errors.Is/As.
	Err error
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return string(e.Code) + ": " + e.Msg
	}
	return string(e.Code) + ": " + e.Msg + ": " + strings.Join(e.Details, "; ")
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message. A %w verb keeps the
// wrapped error reachable through errors.Is and errors.As.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Msg: flatten(err.Error()), Err: errors.Unwrap(err)}
}

// Of returns the code carried by err, or Internal.
func Of(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Message returns err's one-line message without its code.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return flatten(err.Error())
}

// DetailsOf returns the detail lines of a coded error.
func DetailsOf(err error) []string {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}

// flatten keeps a message on one line: a wrapped error with line breaks
// (a child's stderr, say) must not break the one-line error format.
func flatten(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
