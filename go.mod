module github.com/mcpstack/mcpstack

go 1.26.8

require (
	github.com/atombender/go-jsonschema v0.24.1
	github.com/go-chi/chi/v5 v5.5.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.14.0
	golang.org/x/tools v0.52.0
)

require (
	dario.cat/mergo v1.0.2 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
)
