package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// Bounds on what sbxrun reads from files users hand it.
const (
	maxSpecBytes      = 8 << 20
	maxConfigBytes    = 1 << 20
	maxProcessBytes   = 1 << 20
	maxResourcesBytes = 1 << 20
)

// readRegular reads a file a user names: it must be a regular file (a FIFO
// would hang the caller, a device never ends) and at most max bytes. The
// type is checked on the opened descriptor, so the file cannot be swapped
// between the check and the read. "-" reads stdin. Failures carry code.
func readRegular(path string, max int64, code errcode.Code) ([]byte, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := openRegular(path)
		if err != nil {
			return nil, errcode.Errorf(code, "%v", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, errcode.Errorf(code, "reading %s: %v", path, err)
	}
	if int64(len(data)) > max {
		return nil, errcode.Errorf(code, "%s is larger than %d bytes", path, max)
	}
	return data, nil
}

// decodeJSON decodes one JSON document into v; unknownOK keeps fields v
// does not know (the OCI spec requires runtimes to ignore unknown spec
// fields; lint reports them instead).
func decodeJSON(data []byte, v any, unknownOK bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if !unknownOK {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON document")
	}
	return nil
}

// ReadSpec reads an OCI spec for lint: strictly, unknown fields refused.
func ReadSpec(path string) (*specs.Spec, error) {
	data, err := readRegular(path, maxSpecBytes, errcode.SpecInvalid)
	if err != nil {
		return nil, err
	}
	var s specs.Spec
	if err := decodeJSON(data, &s, false); err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "parsing spec %s: %v", path, err)
	}
	return &s, nil
}

// ReadConfig reads a tier config ("" is the empty config, "-" stdin).
func ReadConfig(path string) (*policy.Config, error) {
	if path == "" {
		return &policy.Config{}, nil
	}
	data, err := readRegular(path, maxConfigBytes, errcode.ConfigInvalid)
	if err != nil {
		return nil, err
	}
	return policy.ParseConfig(data)
}

// ReadProcess reads an OCI process (exec --process).
func ReadProcess(path string) (*specs.Process, error) {
	data, err := readRegular(path, maxProcessBytes, errcode.SpecInvalid)
	if err != nil {
		return nil, err
	}
	var p specs.Process
	if err := decodeJSON(data, &p, true); err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "parsing process %s: %v", path, err)
	}
	return &p, nil
}

// ReadResources reads OCI linux.resources (update --resources).
func ReadResources(path string) (*specs.LinuxResources, error) {
	data, err := readRegular(path, maxResourcesBytes, errcode.ConfigInvalid)
	if err != nil {
		return nil, err
	}
	var r specs.LinuxResources
	if err := decodeJSON(data, &r, false); err != nil {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "parsing resources %s: %v", path, err)
	}
	return &r, nil
}
