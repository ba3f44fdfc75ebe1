package engine

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/profiles"
	"github.com/sbxrun/sbxrun/specgen"
)

// RuntimeConfig is the system configuration of the runtime
// (<config-dir>/runtime.yaml).
type RuntimeConfig struct {
	// DefaultTier applies to requests nothing else selects a tier for.
	// Empty: a bundle that names no tier runs as given, like plain runc.
	DefaultTier string `yaml:"default_tier,omitempty"`
}

// maxRuntimeConfig bounds runtime.yaml: a few lines at most.
const maxRuntimeConfig = 64 << 10

// LoadRuntimeConfig reads <dir>/runtime.yaml. A missing file is the empty
// config; one that someone other than owner could have written (it chooses
// the tier of every unannotated bundle) is SANDBOX_STATE_UNTRUSTED; a
// malformed one is an error, never silently ignored.
func LoadRuntimeConfig(dir string, owner int, cat *profiles.Catalog) (*RuntimeConfig, error) {
	path := filepath.Join(dir, "runtime.yaml")
	if err := authz.CheckTrusted(errcode.StateUntrusted, owner, path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &RuntimeConfig{}, nil
		}
		return nil, err
	}
	data, err := readRegular(path, maxRuntimeConfig, errcode.ConfigInvalid)
	if err != nil {
		return nil, err
	}
	var c RuntimeConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "runtime.yaml: %v", err)
	}
	if c.DefaultTier != "" {
		if _, ok := cat.Tier(c.DefaultTier); !ok {
			return nil, errcode.Errorf(errcode.ProfileUnknown, "runtime.yaml: default_tier %q is not a tier (one of %s)", c.DefaultTier, strings.Join(cat.Names(), ", "))
		}
	}
	return &c, nil
}

// Selection is what an incoming spec's annotations ask for.
type Selection struct {
	Tier      string
	Connector string
}

// ParseAnnotations reads dev.sbx.tier and dev.sbx.connector. Absent keys
// give empty fields; a present but malformed value is an error, never
// ignored, so a typo cannot silently fall back to a weaker default.
func ParseAnnotations(a map[string]string, cat *profiles.Catalog) (Selection, error) {
	var s Selection
	if v, ok := a[specgen.AnnotationTier]; ok {
		if _, known := cat.Tier(v); !known {
			return s, errcode.Errorf(errcode.ProfileUnknown, "annotation %s=%q is not a tier (one of %s)",
				specgen.AnnotationTier, v, strings.Join(cat.Names(), ", "))
		}
		s.Tier = v
	}
	if v, ok := a[specgen.AnnotationConnector]; ok {
		if err := authz.CheckConnector(v); err != nil {
			return s, errcode.Errorf(errcode.ConfigInvalid, "annotation %s: %v", specgen.AnnotationConnector, errcode.Message(err))
		}
		s.Connector = v
	}
	return s, nil
}
