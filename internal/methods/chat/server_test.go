package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/server"
)

type outbox struct {
	mu   sync.Mutex
	msgs []string
}

func (o *outbox) Send(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, string(msg))
	return nil
}

// await takes the messages once there are n of them, or after 5 seconds.
func (o *outbox) await(n int) []string {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		o.mu.Lock()
		enough := len(o.msgs) >= n
		o.mu.Unlock()
		if enough {
			break
		}
	}
	return o.take()
}

func (o *outbox) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.msgs
	o.msgs = nil
	return out
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

// The app behind the real server core in strict mode (every message it
// sends is validated against the negotiated revision): a chat with
// progress, a subscription in another session, list_changed.
func TestThroughServer(t *testing.T) {
	for _, rev := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			a, _ := newApp(t, agent.Echo{})
			srv := server.New(a, server.WithStrict(true))
			t.Cleanup(srv.Close)
			open := func() (*core.Session, *outbox) {
				out := &outbox{}
				sess, err := core.Of(srv).NewSession("", out)
				if err != nil {
					t.Fatal(err)
				}
				init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`, rev)
				if r := decode(t, sess.Handle(context.Background(), []byte(init), nil)); r["result"] == nil {
					t.Fatalf("initialize: %v", r)
				}
				sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
				return sess, out
			}
			s1, out1 := open()
			s2, out2 := open()
			// Both sessions are "local"; s2 lists resources first.
			s2.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`), nil)

			related := &outbox{}
			reply := decode(t, s1.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"hello there"},"_meta":{"progressToken":"p1"}}}`), related))
			res, _ := reply["result"].(map[string]any)
			if res == nil || res["isError"] == true {
				t.Fatalf("chat: %v", reply)
			}
			sc := res["structuredContent"].(map[string]any)
			id := sc["conversation_id"].(string)
			var streamed strings.Builder
			for i, m := range related.take() {
				n := decode(t, []byte(m))
				p := n["params"].(map[string]any)
				if n["method"] != "notifications/progress" || p["progressToken"] != "p1" || p["progress"] != float64(i+1) {
					t.Fatalf("related message %d: %s", i, m)
				}
				streamed.WriteString(p["message"].(string))
			}
			if streamed.String() != res["content"].([]any)[0].(map[string]any)["text"] {
				t.Errorf("progress %q vs answer %v", streamed.String(), res["content"])
			}
			want := `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}`
			for name, out := range map[string]*outbox{"s1": out1, "s2": out2} {
				if got := out.take(); len(got) != 1 || got[0] != want {
					t.Errorf("%s stream: %v, want %s", name, got, want)
				}
			}

			// s2 subscribes; s1 continues the conversation.
			sub := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"conversation://%s"}}`, id)
			if r := decode(t, s2.Handle(context.Background(), []byte(sub), nil)); r["result"] == nil {
				t.Fatalf("subscribe: %v", r)
			}
			more := fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"chat","arguments":{"query":"more","conversation_id":%q}}}`, id)
			if r := decode(t, s1.Handle(context.Background(), []byte(more), nil)); r["result"] == nil {
				t.Fatalf("second chat: %v", r)
			}
			want = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"conversation://%s"}}`, id)
			if got := out2.await(1); len(got) != 1 || got[0] != want { // the core queues it for the session
				t.Errorf("s2 stream: %v, want %s", got, want)
			}
			if got := out1.take(); len(got) != 0 {
				t.Errorf("s1 (not subscribed) got %v", got)
			}

			// Every other method passes strict validation.
			for i, body := range []string{
				`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":11,"method":"resources/list"}`,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"conversation://%s"}}`, id),
				`{"jsonrpc":"2.0","id":13,"method":"prompts/list"}`,
				`{"jsonrpc":"2.0","id":14,"method":"prompts/get","params":{"name":"code_review","arguments":{"code":"x"}}}`,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":15,"method":"prompts/get","params":{"name":"summarize_conversation","arguments":{"conversation_id":%q}}}`, id),
				`{"jsonrpc":"2.0","id":16,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"p"}}}`,
				`{"jsonrpc":"2.0","id":17,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"conversation://{id}"},"argument":{"name":"id","value":"conv_"}}}`,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"conversation_get","arguments":{"conversation_id":%q}}}`, id),
				`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"conversation_search","arguments":{"query":"hello"}}}`,
			} {
				r := decode(t, s1.Handle(context.Background(), []byte(body), nil))
				if r["result"] == nil {
					if strings.Contains(fmt.Sprint(r["error"]), "is not valid uri-template") {
						t.Logf("known issue in %s (see TestListResources): %v", rev, r["error"])
						continue
					}
					t.Errorf("request %d: %v", i, r)
				}
			}
			r := decode(t, s1.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":20,"method":"resources/read","params":{"uri":"conversation://conv_nope"}}`), nil))
			if e, _ := r["error"].(map[string]any); e == nil || e["code"] != -32002.0 {
				t.Errorf("unknown conversation: %v", r)
			}
			// See TestListResources: the draft-07 revisions' uri-template
			// check rejects conversation://{id} (a wire issue).
			r = decode(t, s1.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":21,"method":"resources/templates/list"}`), nil))
			if r["result"] == nil {
				t.Logf("known issue in %s: resources/templates/list under --strict: %v", rev, r["error"])
			}
		})
	}
}

// A chat answer can run as a task (2025-11-25): the client gets the task
// at once, the answer with tasks/result, and the conversation is saved
// when it ends.
func TestChatAsTask(t *testing.T) {
	a, st := newApp(t, agent.Echo{})
	srv := server.New(a, server.WithStrict(true))
	t.Cleanup(srv.Close)
	sess, err := core.Of(srv).NewSession("", &outbox{})
	if err != nil {
		t.Fatal(err)
	}
	handle := func(body string) map[string]any {
		return decode(t, sess.Handle(context.Background(), []byte(body), nil))
	}
	init := handle(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if caps := init["result"].(map[string]any)["capabilities"].(map[string]any); caps["tasks"] == nil {
		t.Fatalf("no tasks capability: %v", caps)
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	created := handle(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"query":"hello as a task"},"task":{}}}`)
	id := created["result"].(map[string]any)["task"].(map[string]any)["taskId"].(string)
	res := handle(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
	sc, _ := res["result"].(map[string]any)["structuredContent"].(map[string]any)
	conv, _ := sc["conversation_id"].(string)
	if conv == "" {
		t.Fatalf("tasks/result %v", res)
	}
	if c, err := st.Get(context.Background(), LocalUser, conv); err != nil || c.MessageCount != 2 {
		t.Errorf("the conversation after the task: %+v %v", c, err)
	}
}
