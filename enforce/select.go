package enforce

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/profiles"
)

// RuntimeConfig is the system configuration of the runtime
// (<config-dir>/runtime.yaml).
type RuntimeConfig struct {
	// DefaultTier applies to bundles that name no tier. Empty: such bundles
	// run as given, like plain runc.
	DefaultTier string `yaml:"default_tier,omitempty"`
}

// LoadRuntimeConfig reads <dir>/runtime.yaml; a missing file is the empty
// config, a malformed one an error (never silently ignored).
func LoadRuntimeConfig(dir string) (*RuntimeConfig, error) {
	data, err := os.ReadFile(filepath.Join(dir, "runtime.yaml"))
	if errors.Is(err, os.ErrNotExist) {
		return &RuntimeConfig{}, nil
	}
	if err != nil {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "reading runtime.yaml: %v", err)
	}
	var c RuntimeConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "runtime.yaml: %v", err)
	}
	if c.DefaultTier != "" {
		if _, ok := profiles.Lookup(c.DefaultTier); !ok {
			return nil, errcode.Errorf(errcode.ProfileUnknown, "runtime.yaml: default_tier %q is not a tier", c.DefaultTier)
		}
	}
	return &c, nil
}
