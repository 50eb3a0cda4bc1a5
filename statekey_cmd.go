package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// minStateKey is the shortest secret serve takes for requestState: 256
// bits, the AES key HKDF derives from it.
const minStateKey = 32

// stateKeys reads the secret requestState is sealed with, and the one a
// rotation replaced, from the files the flags name or else from
// MCPSTACK_STATE_KEY and MCPSTACK_STATE_KEY_PREVIOUS (the secrets
// themselves, as a Kubernetes Secret gives them). Without either, the
// server draws its own and a replica refuses another's states.
func stateKeys(file, previousFile string) (key []byte, previous [][]byte, err error) {
	if key, err = secret(file, "MCPSTACK_STATE_KEY"); err != nil || key == nil {
		if err == nil && previousFile != "" {
			err = errors.New("--state-key-previous-file needs --state-key-file (or MCPSTACK_STATE_KEY)")
		}
		return nil, nil, err
	}
	prev, err := secret(previousFile, "MCPSTACK_STATE_KEY_PREVIOUS")
	if err != nil {
		return nil, nil, err
	}
	if prev != nil {
		previous = [][]byte{prev}
	}
	return key, previous, nil
}

// secret is the content of file, or else of the environment variable env,
// without a trailing newline; nil when neither is set.
func secret(file, env string) ([]byte, error) {
	var b []byte
	from := env
	switch v, ok := os.LookupEnv(env); {
	case file != "":
		var err error
		if b, err = os.ReadFile(file); err != nil {
			return nil, err
		}
		from = file
	case ok:
		b = []byte(v)
	default:
		return nil, nil
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < minStateKey {
		return nil, fmt.Errorf("%s: the secret has %d bytes, want at least %d (e.g. openssl rand -base64 48)", from, len(b), minStateKey)
	}
	return b, nil
}
