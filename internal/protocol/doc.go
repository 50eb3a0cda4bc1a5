// Package protocol is what mcpstack knows of each protocol revision, as
// the generator compiled it from schema/: the method table (Method), the
// transports' facts (Transport), the extensions layered onto it, and its
// JSON Schemas, compiled on first use (Validator). A Spec is one
// revision's; internal/generated declares one per revision. Schema
// compiles one document on its own, as a tool's input schema.
package protocol
