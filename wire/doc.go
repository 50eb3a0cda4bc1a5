// Package wire is the small runtime that mcpstack's generated code stands on:
// JSON values as decoded trees, the string-or-integer identifier, schema
// validation against the embedded schemas, and the structured errors that
// become JSON-RPC -32602 answers.
//
// Generated packages decode a message once into a tree (Parse), validate the
// tree against the definition of its method, and convert the tree into
// canonical Go types without parsing again.
package wire
