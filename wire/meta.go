package wire

// The _meta members the protocol itself defines, for the server, the
// client and the validator alike.
const (
	// Of a stateless request (2026-07-28): its revision, the client's
	// capabilities, the log level it asks for.
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	// MetaSubscriptionID tags what a subscriptions/listen stream carries
	// (2026-07-28).
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	// MetaRelatedTask ties a message to its task (2025-11-25).
	MetaRelatedTask = "io.modelcontextprotocol/related-task"
)
