// Package base holds small pieces that handwritten mcp.Handler
// implementations share: the no-op lifecycle methods (Lifecycle) and an
// opaque-cursor paginator for the list methods (Paginate).
//
// Embedding Lifecycle is fine: it answers only protocol bookkeeping methods
// whose application-level answer is always the same (ping, logging/setLevel,
// the client notifications), plus the tasks and subscriptions methods an app
// has not taken on yet. Every application method (tools, resources, prompts,
// completion, initialize, discover) stays unimplemented, so a new revision
// that adds one still fails to compile where package app asserts
// `var _ mcp.Handler = handler{}`.
//
// Embedding mcp.UnimplementedHandler is not fine outside tests and examples:
// it answers every method, so it hides exactly that compile error.
package base
