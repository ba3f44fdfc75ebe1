package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/profiles"
)

// Config narrows a tier for one workload. Every field is optional; an empty
// Config compiles to the tier's defaults. A field that would grant more than
// the tier does is a widening and needs an override authorization.
type Config struct {
	Version      int                                     `yaml:"version,omitempty" json:"version,omitempty"`
	Tier         string                                  `yaml:"tier,omitempty" json:"tier,omitempty"`
	Capabilities map[profiles.Capability]profiles.Access `yaml:"capabilities,omitempty" json:"capabilities,omitempty"`
	FS           FSConfig                                `yaml:"fs,omitempty" json:"fs,omitempty"`
	Network      NetworkConfig                           `yaml:"network,omitempty" json:"network,omitempty"`
	Syscalls     SyscallConfig                           `yaml:"syscalls,omitempty" json:"syscalls,omitempty"`
	Env          EnvConfig                               `yaml:"env,omitempty" json:"env,omitempty"`
	Limits       LimitsConfig                            `yaml:"limits,omitempty" json:"limits,omitempty"`
	Rlimits      map[string]RlimitConfig                 `yaml:"rlimits,omitempty" json:"rlimits,omitempty"`
	Process      ProcessConfig                           `yaml:"process,omitempty" json:"process,omitempty"`
	Hostname     string                                  `yaml:"hostname,omitempty" json:"hostname,omitempty"`
	UserNS       UserNSConfig                            `yaml:"userns,omitempty" json:"userns,omitempty"`
	// OverrideToken authorizes widenings; it is verified (and its use
	// audited) against the authz token store before Compile sees the result.
	OverrideToken string `yaml:"override_token,omitempty" json:"-"`
}

// PathMount is a host path exposed in the sandbox.
type PathMount struct {
	Source      string `yaml:"source" json:"source"`
	Destination string `yaml:"destination,omitempty" json:"destination,omitempty"`
}

// FSConfig declares host paths.
type FSConfig struct {
	Read  []PathMount `yaml:"read,omitempty" json:"read,omitempty"`
	Write []PathMount `yaml:"write,omitempty" json:"write,omitempty"`
}

// NetworkConfig declares the egress allowlist (host:port) for filtered network.
type NetworkConfig struct {
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
}

// SyscallConfig adds denials or (with override) allowances.
type SyscallConfig struct {
	Deny  []string `yaml:"deny,omitempty" json:"deny,omitempty"`
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
}

// EnvConfig declares environment variables.
type EnvConfig struct {
	// Set are fixed values.
	Set map[string]string `yaml:"set,omitempty" json:"set,omitempty"`
	// Pass are names (or patterns) copied from the caller's environment.
	Pass []string `yaml:"pass,omitempty" json:"pass,omitempty"`
	// Allow are exact names kept despite the credential filter (a widening).
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
	// Deny are extra patterns always dropped.
	Deny []string `yaml:"deny,omitempty" json:"deny,omitempty"`
}

// LimitsConfig lowers the tier's resource ceilings.
type LimitsConfig struct {
	Memory Quantity `yaml:"memory,omitempty" json:"memory,omitempty"`
	CPUs   CPUs     `yaml:"cpus,omitempty" json:"cpus,omitempty"`
	Pids   int64    `yaml:"pids,omitempty" json:"pids,omitempty"`
	Tmp    Quantity `yaml:"tmp,omitempty" json:"tmp,omitempty"`
}

// RlimitConfig is a requested POSIX limit.
type RlimitConfig struct {
	Soft uint64 `yaml:"soft" json:"soft"`
	Hard uint64 `yaml:"hard" json:"hard"`
}

// ProcessConfig is the workload to run.
type ProcessConfig struct {
	Args     []string `yaml:"args,omitempty" json:"args,omitempty"`
	Cwd      string   `yaml:"cwd,omitempty" json:"cwd,omitempty"`
	Terminal bool     `yaml:"terminal,omitempty" json:"terminal,omitempty"`
}

// UserNSConfig chooses the host id range for rootful user namespaces.
type UserNSConfig struct {
	HostID uint32 `yaml:"host_id,omitempty" json:"host_id,omitempty"`
}

// Quantity is a byte count written as an integer or with a unit suffix
// (k, M, G decimal; Ki, Mi, Gi binary).
type Quantity int64

// UnmarshalYAML parses a quantity.
func (q *Quantity) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseQuantity(n.Value)
	if err != nil {
		return err
	}
	*q = Quantity(v)
	return nil
}

// ParseQuantity parses "512", "64Ki", "256Mi", "1G".
func ParseQuantity(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("quantity %q: want a positive integer with an optional unit (Ki, Mi, Gi, k, M, G)", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("quantity %q overflows", s)
	}
	return n * mult, nil
}

// CPUs is a CPU share in thousandths of a CPU, written as a decimal ("0.5").
type CPUs int64

// UnmarshalYAML parses a CPU count.
func (c *CPUs) UnmarshalYAML(n *yaml.Node) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64)
	if err != nil || f <= 0 || f > 1024 || math.IsNaN(f) {
		return fmt.Errorf("cpus %q: want a positive decimal such as 0.5", n.Value)
	}
	m := int64(math.Round(f * 1000))
	if m < 1 {
		return fmt.Errorf("cpus %q is below one thousandth of a CPU", n.Value)
	}
	*c = CPUs(m)
	return nil
}

// maxConfigBytes bounds config size: a config is a few hundred lines at most,
// and a bound keeps a hostile file from costing memory.
const maxConfigBytes = 1 << 20

// ParseConfig decodes a YAML (or JSON, a YAML subset) config strictly:
// unknown fields, duplicate keys and trailing documents are errors.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "config is larger than %d bytes", maxConfigBytes)
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return &c, nil // empty document: all defaults
		}
		return nil, errcode.Errorf(errcode.ConfigInvalid, "config: %s", oneLine(err.Error()))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "config: more than one YAML document")
	}
	if c.Version != 0 && c.Version != 1 {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "config: unsupported version %d (want 1)", c.Version)
	}
	return &c, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
