package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chatServer runs `mcpstack serve` (the chat profile) with HS256 auth on a
// free loopback port, and returns its URL and a token.
type chatServer struct {
	url, token, data string
	cmd              *exec.Cmd
	stderr           *lockedBuffer
}

func startChat(t *testing.T, data string, extra ...string) *chatServer {
	t.Helper()
	secret := filepath.Join(data, "secret")
	if _, err := os.Stat(secret); err != nil {
		if err := os.WriteFile(secret, []byte("interop-secret-0123456789-abcdefghijklmnop"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addrFile := filepath.Join(t.TempDir(), "addr")
	cs := &chatServer{data: data, stderr: &lockedBuffer{}}
	args := append([]string{"serve", "--http", "127.0.0.1:0", "--addr-file", addrFile, "--strict",
		"--auth", "hs256", "--auth-secret-file", secret, "--data-dir", data, "--chat-providers", "echo"}, extra...)
	cs.cmd = exec.Command(mcpstackBin, args...)
	cs.cmd.Stderr = cs.stderr
	if err := cs.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.stop(t) })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			cs.url = "http://" + strings.TrimSpace(string(b)) + "/mcp"
			break
		}
	}
	if cs.url == "" {
		t.Fatalf("server did not start:\n%s", cs.stderr)
	}
	cs.token = mint(t, secret, "alice", "mcp")
	return cs
}

func mint(t *testing.T, secret, sub, scope string) string {
	t.Helper()
	out, err := exec.Command(mcpstackBin, "token", "--secret-file", secret, "--sub", sub, "--scope", scope).Output()
	if err != nil {
		t.Fatalf("mcpstack token: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestToolScopes: a tool that needs a scope the token lacks answers -32003;
// with the scope it runs; another user cannot read the conversation.
func TestToolScopes(t *testing.T) {
	data := t.TempDir()
	srv := startChat(t, data, "--tool-scopes", "chat=chat:write")
	secret := filepath.Join(data, "secret")
	writer := mint(t, secret, "alice", "mcp chat:write")
	open := func(token string) string { return srv.open(t, token, "2025-06-18") }
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"secret plans"}}}`
	sid := open(srv.token)
	if _, _, r := srv.post(t, srv.token, sid, call); r["error"] == nil || r["error"].(map[string]any)["code"] != -32003.0 {
		t.Errorf("chat without chat:write: %v, want -32003", r)
	}
	wsid := open(writer)
	_, _, r := srv.post(t, writer, wsid, call)
	conv, _ := r["result"].(map[string]any)["_meta"].(map[string]any)["conversation_id"].(string)
	if conv == "" {
		t.Fatalf("chat with chat:write: %v", r)
	}
	bob := mint(t, secret, "bob", "mcp chat:write")
	bsid := open(bob)
	_, _, got := srv.post(t, bob, bsid, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"conversation://`+conv+`"}}`)
	if got["error"] == nil || got["error"].(map[string]any)["code"] != -32002.0 {
		t.Errorf("bob read alice's conversation: %v, want -32002", got)
	}
}

func (cs *chatServer) stop(t *testing.T) {
	if cs.cmd.ProcessState != nil {
		return
	}
	_ = cs.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cs.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cs.cmd.Process.Kill()
		<-done
		t.Errorf("mcpstack did not stop on SIGINT")
	}
}

// open initializes a session of revision rev with token and returns its id.
func (cs *chatServer) open(t *testing.T, token, rev string) string {
	t.Helper()
	_, hdr, _ := cs.post(t, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	cs.post(t, token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// post sends one message and returns the status and the JSON-RPC answer
// (from a JSON body or the last event of an SSE stream).
func (cs *chatServer) post(t *testing.T, token, sid, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", cs.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		last := ""
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "data: ") {
				last = strings.TrimPrefix(line, "data: ")
			}
		}
		text = last
	}
	var msg map[string]any
	if text != "" {
		_ = json.Unmarshal([]byte(text), &msg)
	}
	return resp.StatusCode, resp.Header, msg
}

func resultText(t *testing.T, msg map[string]any) string {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", msg)
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", msg)
	}
	return content[0].(map[string]any)["text"].(string)
}

// TestDocsChatFlow runs the docs' "Complete Chat Interaction" (initialize,
// tools/list, chat with a bearer token) against a running mcpstack, then
// restarts it and reads the conversation back. The docs' initialize omits
// capabilities, which every revision's schema requires: here it sends {}.
func TestDocsChatFlow(t *testing.T) {
	data := t.TempDir()
	srv := startChat(t, data)
	if code, hdr, _ := srv.post(t, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"example","version":"1.0"}}}`); code != 401 || !strings.Contains(hdr.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("without a token: %d %q, want 401 with a Bearer challenge", code, hdr.Get("WWW-Authenticate"))
	}
	code, hdr, init := srv.post(t, srv.token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"example","version":"1.0"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if code != 200 || sid == "" || init["result"].(map[string]any)["protocolVersion"] != "2024-11-05" {
		t.Fatalf("initialize: %d %v", code, init)
	}
	srv.post(t, srv.token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, tools := srv.post(t, srv.token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var names []string
	for _, tl := range tools["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "chat,conversation_search,conversation_get" {
		t.Errorf("tools: %v", names)
	}
	_, _, chat := srv.post(t, srv.token, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"query":"Hello!"}}}`)
	answer := resultText(t, chat)
	if !strings.Contains(answer, "You said: Hello!") || !strings.Contains(answer, "echo provider") {
		t.Errorf("chat answer %q", answer)
	}
	convID, _ := chat["result"].(map[string]any)["_meta"].(map[string]any)["conversation_id"].(string)
	if !strings.HasPrefix(convID, "conv_") {
		t.Fatalf("no conversation id in _meta: %v", chat)
	}

	// The conversation survives a restart of the server.
	srv.stop(t)
	srv2 := startChat(t, data)
	_, hdr, _ = srv2.post(t, srv2.token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1.0"}}}`)
	sid2 := hdr.Get("Mcp-Session-Id")
	srv2.post(t, srv2.token, sid2, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, got := srv2.post(t, srv2.token, sid2, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"conversation_get","arguments":{"conversation_id":"`+convID+`"}}}`)
	if text := resultText(t, got); !strings.Contains(text, "Hello!") || !strings.Contains(text, "You said: Hello!") {
		t.Errorf("after restart, conversation_get: %q", text)
	}
}

// TestChatOverStdio runs the chat tool with the official Go SDK client over
// stdio; the client's own model answers through sampling.
func TestChatOverStdio(t *testing.T) {
	cmd := exec.Command(mcpstackBin, "serve", "--stdio", "--strict", "--data-dir", t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	var asked string
	client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			for _, m := range req.Params.Messages {
				if tc, ok := m.Content.(*mcp.TextContent); ok {
					asked += tc.Text + "\n"
				}
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: samplingModel, Content: &mcp.TextContent{Text: "Hi from the client's model."}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{"query": "Hello!"}})
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, stderr)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "Hi from the client's model.") || res.IsError {
		t.Errorf("chat answer %q (isError %v)", text, res.IsError)
	}
	if !strings.Contains(asked, "Hello!") {
		t.Errorf("the sampling request did not carry the query: %q", asked)
	}
}

// TestConversationReadScope: with --conversation-read-scope, a token
// without the scope reads a conversation by no path: not the tool, not
// resources/read, not the summarize prompt, not a search snippet (the
// regression: --tool-scopes conversation_get=... left the other paths
// open). With the scope, every path works.
func TestConversationReadScope(t *testing.T) {
	data := t.TempDir()
	srv := startChat(t, data, "--conversation-read-scope", "chat:read")
	secret := filepath.Join(data, "secret")
	reader := mint(t, secret, "alice", "mcp chat:read")
	sid := srv.open(t, srv.token, "2025-11-25") // alice, without chat:read
	_, _, r := srv.post(t, srv.token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"secret plans"}}}`)
	conv, _ := r["result"].(map[string]any)["_meta"].(map[string]any)["conversation_id"].(string)
	if conv == "" {
		t.Fatalf("chat (needs no read scope to start): %v", r)
	}
	paths := map[string]string{
		"conversation_get":    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"conversation_get","arguments":{"conversation_id":"` + conv + `"}}}`,
		"conversation_search": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"conversation_search","arguments":{"query":"secret"}}}`,
		"resources/read":      `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"conversation://` + conv + `"}}`,
		"resources/list":      `{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}`,
		"summarize prompt":    `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"summarize_conversation","arguments":{"conversation_id":"` + conv + `"}}}`,
		"completion":          `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize_conversation"},"argument":{"name":"conversation_id","value":"conv_"}}}`,
	}
	rsid := srv.open(t, reader, "2025-11-25")
	for name, body := range paths {
		if _, _, got := srv.post(t, srv.token, sid, body); got["error"] == nil || got["error"].(map[string]any)["code"] != -32003.0 {
			t.Errorf("%s without chat:read: %v, want -32003", name, got)
		}
		if _, _, got := srv.post(t, reader, rsid, body); got["error"] != nil || strings.Contains(fmt.Sprint(got["result"]), "isError:true") {
			t.Errorf("%s with chat:read: %v", name, got)
		}
	}
}
