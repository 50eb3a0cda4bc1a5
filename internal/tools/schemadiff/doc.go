// Package schemadiff compares mcpstack's own JSON Schemas for one MCP revision
// (schema/<rev>/<kind>/<Definition>.json, see package schema) with the official
// monolithic schema.json of that revision, and reports every place where they
// differ in meaning.
//
// # What is compared
//
// Both sides are walked structurally from each definition. Before comparing,
// every schema is normalised:
//
//   - annotations are dropped: description, title, $schema, $comment,
//     default, examples and every x-* keyword (such as x-mcp-result); our
//     schemas give defaults the official ones lack (a result's resultType
//     "complete"), which the generated encoders write and no validator reads;
//   - $ref targets become definition names: our relative file refs
//     ("../content/TextContent.json") and their fragment refs
//     ("#/$defs/TextContent", "#/definitions/TextContent") both become
//     "TextContent"; a ref into a definition keeps its pointer
//     ("TextContent#/properties/text");
//   - type becomes a string when it names one type and a sorted array
//     otherwise; required and enum are compared as sets;
//   - the boolean schema true equals {}, and false equals {"not": {}};
//   - numbers are compared by value (1 equals 1.0).
//
// The walk knows where it is: keys of properties, patternProperties, $defs,
// definitions and dependentSchemas are names, not keywords, so a property
// called "type", "enum" or "properties" is compared as a property.
//
// # Differences
//
// A Difference has a stable Path, a Kind and the normalised values on each
// side (absent when a side lacks the thing). The path starts with the
// definition name and continues with JSON Pointer segments (escaped with ~0 and
// ~1), for example "CallToolRequest/properties/params/required". Kinds:
//
//   - "definition": a definition exists on one side only (the values are our
//     file path and their pointer);
//   - "property": a property (or another named subschema) exists on one side
//     only (the value is the normalised property schema);
//   - a keyword name ("type", "required", "enum", "const", "anyOf", "allOf",
//     "oneOf", "items", "additionalProperties", "format", "minimum", "maximum",
//     "maxItems", "$ref", …): the keyword is on one side only or its value
//     differs. For anyOf, allOf and oneOf a difference in the number of
//     branches is reported on the keyword; with the same number, branches are
//     compared pairwise, in order.
//   - "schema": a subschema that is not an object or a boolean (an invalid
//     schema) differs.
//
// # Accepted differences: schema/<rev>/differences.json
//
// A revision folder may hold differences.json, a JSON array of accepted
// differences, each with the path and kind exactly as reported and a reason:
//
//	[
//	  {
//	    "path": "Tool/properties/inputSchema/properties/type/const",
//	    "kind": "const",
//	    "reason": "why our schema deliberately differs here"
//	  }
//	]
//
// Unknown fields, empty values and duplicate entries are errors. A reported
// difference that is listed gets status "accepted"; one that is not listed
// gets status "new"; a listed entry that no longer occurs is reported with
// status "stale". A revision is clean when it has no new and no stale
// differences.
//
// # Command
//
// Command implements "mcpstack schemadiff --official FILE --revision REV
// [--json] [--schemas DIR]". It prints one line per difference and a summary
// line, and exits 0 when clean, 1 when there are new or stale differences and
// 2 on a usage or I/O error.
package schemadiff
