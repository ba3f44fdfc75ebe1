package policy

import (
	"errors"
	"fmt"
	"strings"
)

// Code is a stable error code that users and scripts may branch on. The
// list, with meanings and exit statuses, is docs/errors.md.
type Code string

// Stable error codes.
const (
	// Codes of bd-3ua7.
	CodeDowngradeBlocked Code = "SANDBOX_DOWNGRADE_BLOCKED"
	CodeProfileUnknown   Code = "SANDBOX_PROFILE_UNKNOWN"
	CodePolicyConflict   Code = "SANDBOX_POLICY_CONFLICT"
	CodeCompileError     Code = "SANDBOX_COMPILE_ERROR"

	// CodeConfigInvalid: a config, flag value, path or annotation could not
	// be parsed or is malformed (as opposed to well-formed but refused).
	CodeConfigInvalid Code = "SANDBOX_CONFIG_INVALID"
	// CodeOverrideInvalid: an override token was presented but is unknown,
	// expired, used up, or the token store is not trustworthy.
	CodeOverrideInvalid Code = "SANDBOX_OVERRIDE_INVALID"
	// CodeSpecNoncompliant: an OCI spec violates a tier (lint, enforce).
	CodeSpecNoncompliant Code = "SANDBOX_SPEC_NONCOMPLIANT"
	// CodeSpecInvalid: an OCI spec could not be read or parsed.
	CodeSpecInvalid Code = "SANDBOX_SPEC_INVALID"
	// CodeAuditTampered: the audit log's hash chain does not verify.
	CodeAuditTampered Code = "SANDBOX_AUDIT_TAMPERED"
	// CodeUnenforceable: a protection the tier requires cannot be applied
	// on this host or build (e.g. process_exec=deny without Landlock), so
	// the sandbox is refused rather than run with less.
	CodeUnenforceable Code = "SANDBOX_UNENFORCEABLE"
	// CodeInternal: an I/O or system failure not caused by the input.
	CodeInternal Code = "SANDBOX_INTERNAL"
)

// ExitStatus maps a code to the process exit status the CLI uses.
func (c Code) ExitStatus() int {
	switch c {
	case CodeProfileUnknown, CodeConfigInvalid, CodeSpecInvalid:
		return 2
	case CodeDowngradeBlocked, CodePolicyConflict, CodeOverrideInvalid, CodeUnenforceable:
		return 3
	case CodeCompileError:
		return 4
	case CodeSpecNoncompliant:
		return 5
	case CodeAuditTampered:
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
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return string(e.Code) + ": " + e.Msg
	}
	return string(e.Code) + ": " + e.Msg + ": " + strings.Join(e.Details, "; ")
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code carried by err, or CodeInternal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
