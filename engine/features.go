package engine

import (
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go/features"

	"github.com/sbxrun/sbxrun/container"
)

// Features is the OCI features document of this build and host, with
// sbxrun's own facts as annotations.
func (e *Engine) Features(version string) *features.Features {
	feat := container.Features()
	facts := e.runtimeFacts()
	if feat.Annotations == nil {
		feat.Annotations = map[string]string{}
	}
	feat.Annotations["dev.sbx.version"] = version
	feat.Annotations["dev.sbx.tiers"] = strings.Join(e.cat.Names(), ",")
	feat.Annotations["dev.sbx.landlock.abi"] = strconv.Itoa(facts.LandlockABI)
	feat.Annotations["dev.sbx.cgroup-limits"] = strconv.FormatBool(facts.CgroupLimits)
	feat.Annotations["dev.sbx.rootless"] = strconv.FormatBool(facts.Rootless)
	return feat
}
