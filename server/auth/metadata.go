package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownPath is the RFC 9728 well-known path; MetadataPaths inserts the
// resource's path after it.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// Metadata is the RFC 9728 protected resource metadata document.
type Metadata struct {
	// Resource is the resource identifier: the canonical URL of the MCP
	// endpoint, the audience tokens must be issued for.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuer identifiers of the authorization
	// servers that issue tokens for it; MCP requires at least one.
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported are the scopes clients may ask for.
	ScopesSupported []string `json:"scopes_supported"`
	// BearerMethodsSupported is always ["header"]: tokens are accepted in
	// the Authorization header only.
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	// ResourceName is a name for people (optional).
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is a URL of documentation for people (optional).
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
}

// ProtectedResourceMetadata returns the handler of the metadata document;
// mount it at every path of MetadataPaths(md.Resource). It answers GET and
// HEAD (and CORS preflights: the document is public, browser-based clients
// read it) and 405 to anything else.
func ProtectedResourceMetadata(md Metadata) (http.Handler, error) {
	if _, err := resourceURL(md.Resource); err != nil {
		return nil, err
	}
	if len(md.AuthorizationServers) == 0 {
		return nil, errors.New("auth: the protected resource metadata needs at least one authorization server")
	}
	for _, as := range md.AuthorizationServers {
		if u, err := url.Parse(as); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("auth: authorization server %q is not an absolute http(s) URL", as)
		}
	}
	md.BearerMethodsSupported = []string{"header"}
	if md.ScopesSupported == nil {
		md.ScopesSupported = []string{}
	}
	body, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age=3600")
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				_, _ = w.Write(body)
			}
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	}), nil
}

// resourceURL checks a resource identifier: an absolute http(s) URL
// without fragment (RFC 9728 §1.2, RFC 8707 §2).
func resourceURL(resource string) (*url.URL, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("auth: resource %q must be an absolute http(s) URL without query or fragment, e.g. https://mcp.example.com/mcp", resource)
	}
	return u, nil
}

// MetadataPaths returns where the metadata of resource is served on its
// host: the path-inserted form (RFC 9728 §3.1), which clients try first,
// then the root form they fall back to; for a resource without a path,
// only the root form.
func MetadataPaths(resource string) ([]string, error) {
	u, err := resourceURL(resource)
	if err != nil {
		return nil, err
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{WellKnownPath}, nil
	}
	return []string{WellKnownPath + p, WellKnownPath}, nil
}

// MetadataURL is the URL of the metadata of resource, as the
// resource_metadata of a challenge: the path-inserted form.
func MetadataURL(resource string) (string, error) {
	u, err := resourceURL(resource)
	if err != nil {
		return "", err
	}
	paths, _ := MetadataPaths(resource)
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() + paths[0], nil
}
