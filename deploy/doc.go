// Package deploy holds what ships mcpstack: the Dockerfile's checks and
// the Kubernetes manifests (kubectl apply -k deploy/), with the Grafana
// dashboard. It is a module of its own, so that the Kubernetes API types
// its tests decode the manifests into stay out of mcpstack's go.mod.
package deploy
