package seatbelt

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// privateLinks are the top-level symlinks of macOS into /private. Seatbelt
// matches resolved paths, so a rule on /tmp/x never matches anything
// (srt #596): every path is rewritten to /private/… before it becomes a
// parameter.
var privateLinks = []string{"/tmp", "/var", "/etc"}

// maxPath is macOS's PATH_MAX less the terminating NUL.
const maxPath = 1023

// Resolver resolves the symlinks of an existing path, like
// filepath.EvalSymlinks. For a missing path it must return an error
// matching fs.ErrNotExist; canonicalisation then resolves the nearest
// existing ancestor and appends the rest.
type Resolver func(string) (string, error)

// canonicaliser turns user-supplied paths into the form seatbelt matches.
type canonicaliser struct {
	home    string // canonical
	resolve Resolver
}

// path canonicalises p: control characters rejected, ~ expanded, made
// absolute, cleaned, symlinks resolved up to the nearest existing
// ancestor, /tmp, /var and /etc mapped to /private.
func (c canonicaliser) path(p string) (string, error) {
	if err := checkPathChars(p); err != nil {
		return "", err
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return "", fmt.Errorf("path %q: no home directory to expand ~ with", p)
		}
		p = c.home + p[1:]
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("path %q: ~user is not supported", p)
	}
	if !path.IsAbs(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("path %q: %w", p, err)
		}
		p = abs
	}
	r, err := c.resolveExisting(path.Clean(p))
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", p, err)
	}
	r = toPrivate(path.Clean(r))
	if err := checkPathChars(r); err != nil {
		return "", err
	}
	if !path.IsAbs(r) {
		return "", fmt.Errorf("path %q resolves to the relative %q", p, r)
	}
	return r, nil
}

func (c canonicaliser) resolveExisting(p string) (string, error) {
	r, err := c.resolve(p)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	dir, base := path.Split(p)
	dir = path.Clean(dir)
	if dir == p {
		return p, nil
	}
	rd, err := c.resolveExisting(dir)
	if err != nil {
		return "", err
	}
	return path.Join(rd, base), nil
}

func checkPathChars(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case len(p) > maxPath:
		return fmt.Errorf("path of %d bytes is longer than PATH_MAX", len(p))
	case strings.IndexFunc(p, isControl) >= 0:
		return fmt.Errorf("path %q contains a control character", p)
	}
	return nil
}

func toPrivate(p string) string {
	for _, l := range privateLinks {
		if p == l || strings.HasPrefix(p, l+"/") {
			return "/private" + p
		}
	}
	return p
}

// within reports whether p equals root or lies below it.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// ancestors returns the directories above p, without "/".
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		out = append(out, d)
	}
	return out
}

// ancestorRegex is an anchored regex matching exactly the directories
// above the given paths. The number of ancestors differs between
// machines, so they travel as one parameter rather than as literals: the
// profile text stays the same everywhere.
func ancestorRegex(paths []string) (string, error) {
	seen := map[string]bool{}
	var quoted []string
	for _, p := range paths {
		for _, a := range ancestors(p) {
			if !seen[a] {
				seen[a] = true
				quoted = append(quoted, regexp.QuoteMeta(a))
			}
		}
	}
	if len(quoted) == 0 {
		return "", fmt.Errorf("no ancestor directories")
	}
	sort.Strings(quoted)
	re := "^(" + strings.Join(quoted, "|") + ")$"
	if len(re) > maxString {
		return "", fmt.Errorf("the ancestor directories of %d paths need a %d-byte regex (limit %d)", len(paths), len(re), maxString)
	}
	return re, nil
}
