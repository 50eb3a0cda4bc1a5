package core

import (
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/schema"
)

// extensionPrefix marks this project's own notifications: nothing under it
// can pass for a protocol message.
const extensionPrefix = "notifications/io.mcpstack/"

// encodeExtension encodes one of the project's extension notifications,
// whose params are defined in schema/ext and validated there in strict
// mode.
func (s *Server) encodeExtension(method, definition string, params any) ([]byte, error) {
	if !strings.HasPrefix(method, extensionPrefix) {
		return nil, fmt.Errorf("server: %q is not an extension notification (%s...)", method, extensionPrefix)
	}
	if s.cfg.strict {
		v, err := s.extValidator()
		if err == nil {
			err = v.Validate(definition, params)
		}
		if err != nil {
			s.log.Error("strict: invalid extension notification", "method", method, "err", err)
			return nil, fmt.Errorf("server: invalid %s: %w", method, err)
		}
	}
	return jsontree.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (s *Server) extValidator() (*protocol.Validator, error) {
	s.extOnce.Do(func() { s.ext, s.extErr = protocol.NewValidator(schema.FS, schema.Ext) })
	return s.ext, s.extErr
}
