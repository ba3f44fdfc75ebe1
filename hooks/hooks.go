// Package hooks turns OCI hook invocations into audit records. An engine
// (or a spec author) adds `sbxrun hook STAGE` as an OCI hook; the runtime
// runs it with the container's state JSON on stdin, and the hook appends one
// record to the audit log, so container lifecycles (created, started,
// stopped) appear beside the tier decisions that governed them.
package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/errcode"
)

// Stages are the OCI hook stages sbxrun records.
var Stages = []string{"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}

// maxState bounds the state document read from stdin.
const maxState = 1 << 20

// ReadState parses the OCI state a runtime passes to a hook.
func ReadState(r io.Reader) (*specs.State, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxState+1))
	if err != nil {
		return nil, fmt.Errorf("reading hook state: %w", err)
	}
	if len(data) > maxState {
		return nil, errcode.Errorf(errcode.SpecInvalid, "hook state is larger than %d bytes", maxState)
	}
	var st specs.State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "hook state: %v", err)
	}
	if st.ID == "" || st.Version == "" {
		return nil, errcode.Errorf(errcode.SpecInvalid, "hook state needs ociVersion and id")
	}
	return &st, nil
}

// Record is the audit record of stage for a container in state st.
func Record(stage string, st *specs.State) (audit.Record, error) {
	known := false
	for _, s := range Stages {
		known = known || s == stage
	}
	if !known {
		return audit.Record{}, errcode.Errorf(errcode.ConfigInvalid, "unknown hook stage %q (one of %v)", stage, Stages)
	}
	rec := audit.Record{Kind: audit.KindLifecycle, Operation: stage, Target: st.ID, Result: audit.ResultAllowed,
		Tier: st.Annotations["dev.sbx.tier"], Connector: st.Annotations["dev.sbx.connector"],
		Reason: fmt.Sprintf("status=%s pid=%d bundle=%s", st.Status, st.Pid, st.Bundle)}
	if rec.Tier != "" {
		rec.Policy = "tier:" + rec.Tier
	}
	return rec, nil
}
