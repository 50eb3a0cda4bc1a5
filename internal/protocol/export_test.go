package protocol

// For the tests: a Schema's compiled check and its reference alone.

func (s *Schema) SurelyValid(v any) bool        { return s.surely != nil && s.surely(v) }
func (s *Schema) ReferenceValidate(v any) error { return validationError(s.name, s.s.Validate(v)) }
func (s *Schema) Taught() bool                  { return s.surely != nil }
