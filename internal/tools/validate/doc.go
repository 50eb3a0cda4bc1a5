// Package validate checks MCP message logs against the protocol:
// `mcpstack validate`, made for CI (issue #6).
//
// A log is one of:
//
//   - a recording (FormatRecorded): one schema/ext/RecordedMessage per line,
//     {"ts":…,"session":…,"dir":"c2s"|"s2c","msg":…}, as internal/record
//     writes it for `mcpstack serve --record`;
//   - plain JSON Lines (FormatJSONL): one message or batch per line, as on
//     stdio, with the directions inferred;
//   - a stdio pair (PairInput): what the client wrote and what the server
//     wrote, merged in causal order (pair.go);
//   - a HAR file (FormatHAR): read as the recording of its HTTP exchanges
//     (har.go).
//
// Files may be gzipped; many logs are checked in one run, each on its own.
//
// Every finding names a rule (rules.go) with a stable id, a severity, the
// file and line, the session, a JSON pointer into the message, a reason and
// an excerpt. The revision of each message comes from the initialize
// exchange, from params._meta in revisions without initialize
// (2026-07-28), or from WithRevision; what a revision allows (batches, its
// error response, its capabilities, lifecycle or not) is read from its
// method table and schemas, never from its name.
//
// A Check streams: lines are read in chunks, parsed on every core
// (parse.go, message.go), passed in order through the per-session state
// machines (state.go), whose schema validations run on every core again,
// and the findings come out in log order (pipeline.go). Memory depends on
// the sessions and requests open at a time, not on the length of a log.
//
// Files: input.go (inputs, formats, lines), pair.go, har.go, http.go (the
// Streamable HTTP rules), parse.go (the JSON
// parser), message.go (records and the JSON-RPC envelope), revision.go and
// capabilities.go (what each revision allows), state.go and idset.go (the
// session rules), pipeline.go, validator.go (the API), output.go (text,
// json, github, junit), command.go (the CLI).
package validate
