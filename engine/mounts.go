package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
)

// maxEngineFile bounds an engine's per-container file (hosts, resolv.conf,
// hostname, .containerenv): a few lines each.
const maxEngineFile = 1 << 20

// resolveBinds rewrites the source of each bind mount of a spec run under a
// tier to the path it really names, so that what enforcement checks — the
// forbidden paths, the grants — and what libcontainer mounts is the file a
// symlink would have led to, not the link. A relative source is relative
// to the bundle. An engine's per-container file must be a regular file of
// modest size: a directory or a device at /etc/hosts is not one.
//
// What remains is a race: a source under a directory the spec's author can
// write could be swapped for a symlink between this check and the mount.
// libcontainer resolves mount sources by path; engines keep theirs in
// directories only they can write.
//
// A source that does not exist is returned in missing rather than refused
// here, so that enforcement can first name what is wrong with it (a
// forbidden path, say); the caller refuses it after.
func resolveBinds(s *specs.Spec, bundle string) (changes, missing []string, err error) {
	for i := range s.Mounts {
		m := &s.Mounts[i]
		if !enforce.IsBind(*m) {
			continue
		}
		src := m.Source
		if !filepath.IsAbs(src) {
			src = filepath.Join(bundle, src)
		}
		real, err := filepath.EvalSymlinks(src)
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, fmt.Sprintf("mounts[%d].source %s does not exist", i, m.Source))
			continue
		}
		if err != nil {
			return nil, nil, errcode.Errorf(errcode.SpecInvalid, "mounts[%d].source %s: %v", i, m.Source, err)
		}
		if real != m.Source {
			changes = append(changes, fmt.Sprintf("mounts[%d].source %s resolved to %s (the real path is checked and mounted)", i, m.Source, real))
			m.Source = real
		}
		if enforce.IsEngineFile(*m) {
			fi, err := os.Lstat(real)
			if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxEngineFile {
				return nil, nil, errcode.Errorf(errcode.SpecNoncompliant, "mounts[%d]: %s at %s must be an engine's regular file of at most %d bytes", i, real, m.Destination, maxEngineFile)
			}
		}
	}
	return changes, missing, nil
}
