package main

import (
	"errors"

	"github.com/mcpstack/mcpstack/internal/authtoken"
)

// stateKeys reads the secret requestState is sealed with, and the one a
// rotation replaced, from the files the flags name or else from
// MCPSTACK_STATE_KEY and MCPSTACK_STATE_KEY_PREVIOUS (the secrets
// themselves, as a Kubernetes Secret gives them), at least 32 bytes each
// (the AES key HKDF derives from them is 256 bits). Without either, the
// server draws its own and a replica refuses another's states.
func stateKeys(file, previousFile string) (key []byte, previous [][]byte, err error) {
	if key, err = authtoken.ReadSecret(file, "MCPSTACK_STATE_KEY", "requestState secret"); err != nil || key == nil {
		if err == nil && previousFile != "" {
			err = errors.New("--state-key-previous-file needs --state-key-file (or MCPSTACK_STATE_KEY)")
		}
		return nil, nil, err
	}
	prev, err := authtoken.ReadSecret(previousFile, "MCPSTACK_STATE_KEY_PREVIOUS", "previous requestState secret")
	if err != nil {
		return nil, nil, err
	}
	if prev != nil {
		previous = [][]byte{prev}
	}
	return key, previous, nil
}
