package enforce

import (
	"strings"

	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/profiles"
	"github.com/sbxrun/sbxrun/specgen"
)

// Selection is what an incoming spec's annotations ask for.
type Selection struct {
	Tier      string
	Connector string
}

// ParseAnnotations reads dev.sbx.tier and dev.sbx.connector. Absent keys
// give empty fields; a present but malformed value is an error, never
// ignored, so a typo cannot silently fall back to a weaker default.
func ParseAnnotations(a map[string]string) (Selection, error) {
	var s Selection
	if v, ok := a[specgen.AnnotationTier]; ok {
		if _, known := profiles.Lookup(v); !known {
			return s, errcode.Errorf(errcode.ProfileUnknown, "annotation %s=%q is not a tier (one of %s)",
				specgen.AnnotationTier, v, strings.Join(profiles.Builtin().Names(), ", "))
		}
		s.Tier = v
	}
	if v, ok := a[specgen.AnnotationConnector]; ok {
		if err := authz.CheckConnector(v); err != nil {
			return s, errcode.Errorf(errcode.ConfigInvalid, "annotation %s: %v", specgen.AnnotationConnector, err)
		}
		s.Connector = v
	}
	return s, nil
}
