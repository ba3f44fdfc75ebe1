//go:build !linux || !cgo

package container

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// Features reports that this build runs no containers.
func Features() *features.Features {
	return &features.Features{OCIVersionMin: "1.0.0", OCIVersionMax: specs.Version, Annotations: map[string]string{}}
}
