package core

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/peer"
)

// DefaultStateTTL is how long a requestState may be given back: long
// enough for a person to answer an elicitation.
const DefaultStateTTL = time.Hour

// A requestState (2026-07-28, input required) carries the answers the
// client gave in earlier rounds, so that the server keeps nothing between
// them. The client holds it, so it is sealed with AES-256-GCM: the client
// can neither read it nor change it, and it is bound to what it was issued
// for. Opened, it must name the same caller, method and params (name,
// arguments, uri) as the request that brings it back, and not be expired;
// the inputResponses beside it count only for the requests it asked.
type requestState struct {
	Owner   string         `json:"o"`           // the caller's principal ("" without authentication)
	Method  string         `json:"m"`           // tools/call, prompts/get, ...
	Digest  []byte         `json:"d"`           // SHA-256 of the params that matter (paramsDigest)
	Asked   []string       `json:"i,omitempty"` // the keys of the input requests it answers
	Expires int64          `json:"e"`           // unix seconds
	Answers map[string]any `json:"a,omitempty"`
}

// stateBinding is what a state is bound to: the request it comes with.
type stateBinding struct {
	owner, method string
	digest        []byte
}

var errBadState = errors.New("requestState failed its integrity check")

// stateAAD names what the ciphertext is, so that nothing else sealed with
// the same key can pass for a requestState.
var stateAAD = []byte("mcpstack requestState v1")

// paramsDigest hashes a request's params without the members that change
// between rounds (_meta, inputResponses, requestState): the tool or prompt
// name, its arguments, a resource's uri. Maps encode with sorted keys, so
// equal params hash equal.
func paramsDigest(params map[string]any) []byte {
	rest := make(map[string]any, len(params))
	for k, v := range params {
		switch k {
		case "_meta", "inputResponses", "requestState":
		default:
			rest[k] = v
		}
	}
	b, _ := jsontree.Marshal(rest)
	sum := sha256.Sum256(b)
	return sum[:]
}

// stateAEADs are the ciphers of requestState: the first, of the current
// key, seals; each opens (the keys a rotation replaced).
func (s *Server) stateAEADs() []cipher.AEAD {
	s.keyOnce.Do(func() {
		secret := s.cfg.stateKey
		if len(secret) == 0 {
			secret = make([]byte, 32)
			if _, err := rand.Read(secret); err != nil {
				panic(fmt.Sprintf("crypto/rand: %v", err))
			}
		}
		for _, k := range append([][]byte{secret}, s.cfg.previousStateKeys...) {
			if len(k) > 0 {
				s.aeads = append(s.aeads, stateCipher(k))
			}
		}
	})
	return s.aeads
}

// stateCipher is AES-256-GCM under a key HKDF derives from secret.
func stateCipher(secret []byte) cipher.AEAD {
	key, err := hkdf.Key(sha256.New, secret, nil, "mcpstack requestState AES-256-GCM", 32)
	if err != nil {
		panic(fmt.Sprintf("hkdf: %v", err))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(fmt.Sprintf("aes: %v", err))
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(fmt.Sprintf("gcm: %v", err))
	}
	return aead
}

// sealState seals the answers so far and the requests now asked.
func (s *Server) sealState(b stateBinding, answers map[string]any, asked map[string]peer.Input) (string, error) {
	st := requestState{Owner: b.owner, Method: b.method, Digest: b.digest, Answers: answers,
		Expires: time.Now().Add(s.cfg.stateTTL).Unix()}
	for k := range asked {
		st.Asked = append(st.Asked, k)
	}
	slices.Sort(st.Asked)
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	aead := s.stateAEADs()[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, stateAAD)), nil
}

// openState opens a state given back with a request bound as b, and
// returns its answers and the keys of the requests it asked.
func (s *Server) openState(b stateBinding, state string) (map[string]any, []string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil {
		return nil, nil, errBadState
	}
	var plain []byte
	for _, aead := range s.stateAEADs() {
		if len(raw) < aead.NonceSize()+aead.Overhead() {
			return nil, nil, errBadState
		}
		if plain, err = aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], stateAAD); err == nil {
			break
		}
	}
	if plain == nil {
		return nil, nil, errBadState
	}
	var st requestState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, nil, errBadState
	}
	switch {
	case st.Owner != b.owner:
		return nil, nil, errors.New("requestState was issued to another user")
	case st.Method != b.method || !slices.Equal(st.Digest, b.digest):
		return nil, nil, errors.New("requestState was issued for another request (method, name or arguments differ)")
	case time.Now().Unix() > st.Expires:
		return nil, nil, errors.New("requestState has expired; send the request again without it")
	}
	return st.Answers, st.Asked, nil
}
