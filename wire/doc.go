// Package wire holds what a user of mcpstack touches of JSON-RPC: the
// errors a handler returns (Error and its codes, ResourceNotFound), the
// string-or-integer request ID, the structured error a schema failure
// becomes (ValidationError, sent as -32602 with its field and reason), and
// Encoder, which every protocol type implements. The runtime of the
// generated code is under internal/.
package wire
