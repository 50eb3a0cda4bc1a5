package base

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func TestPaginate(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		name  string
		size  int
		items []string
		want  [][]string
	}{
		{"pages of 2", 2, items, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
		{"exact fit", 5, items, [][]string{items}},
		{"pages of 1", 1, items[:3], [][]string{{"a"}, {"b"}, {"c"}}},
		{"zero size is the default", 0, items, [][]string{items}},
		{"negative size is the default", -3, items, [][]string{items}},
		{"empty list", 2, nil, [][]string{{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Paginator{PageSize: tc.size}
			var got [][]string
			cursor := ""
			for range 10 {
				page, next, err := Paginate(p, "things", tc.items, cursor)
				if err != nil {
					t.Fatal(err)
				}
				if page == nil {
					t.Fatal("nil page: lists must encode as []")
				}
				got = append(got, page)
				if next == "" {
					break
				}
				cursor = next
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("pages %q, want %q", got, tc.want)
			}
		})
	}
}

// A page cannot grow into the rest of the list it was cut from.
func TestPageIsCapped(t *testing.T) {
	items := []int{1, 2, 3, 4}
	page, _, _ := Paginate(Paginator{PageSize: 2}, "n", items, "")
	_ = append(page, 99)
	if items[2] != 3 {
		t.Fatal("appending to a page overwrote the list")
	}
}

func TestCursorErrors(t *testing.T) {
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	items := []int{1, 2, 3}
	tests := []struct {
		name, cursor, reason string
	}{
		{"not base64", "%%%", "not a cursor issued by this server"},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte("v1:things:1")), "not a cursor issued by this server"},
		{"no version", raw("things:1"), "not a cursor issued by this server"},
		{"other version", raw("v2:things:1"), "not a cursor issued by this server"},
		{"no offset", raw("v1:things"), "not a cursor issued by this server"},
		{"negative offset", raw("v1:things:-1"), "not a cursor issued by this server"},
		{"offset with sign", raw("v1:things:+1"), "not a cursor issued by this server"},
		{"offset not a number", raw("v1:things:x"), "not a cursor issued by this server"},
		{"other list", EncodeCursor("others", 1), "the cursor belongs to another list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Paginate(Paginator{PageSize: 1}, "things", items, tc.cursor)
			var we *wire.Error
			if !errors.As(err, &we) || we.Code != wire.CodeInvalidParams {
				t.Fatalf("error %v, want -32602", err)
			}
			data, _ := we.Data.(map[string]any)
			if data["field"] != "/params/cursor" || data["reason"] != tc.reason {
				t.Errorf("data %v, want field /params/cursor, reason %q", we.Data, tc.reason)
			}
		})
	}
}

// A cursor past the end of a list that shrank addresses an empty last page.
func TestCursorPastEnd(t *testing.T) {
	page, next, err := Paginate(Paginator{PageSize: 2}, "things", []int{1}, EncodeCursor("things", 4))
	if err != nil || len(page) != 0 || next != "" {
		t.Fatalf("page %v, next %q, err %v", page, next, err)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, list := range []string{"tools", "resources", "a:b", ""} {
		for _, off := range []int{0, 1, 50, 1 << 40} {
			c := EncodeCursor(list, off)
			got, err := DecodeCursor(list, c)
			if err != nil || got != off {
				t.Errorf("DecodeCursor(%q, EncodeCursor(%d)) = %d, %v", list, off, got, err)
			}
		}
	}
}

func TestLifecycle(t *testing.T) {
	var l Lifecycle
	ctx := context.Background()
	ping, err := l.Ping(ctx, nil)
	if err != nil || ping == nil {
		t.Errorf("Ping = %v, %v", ping, err)
	} else if b, _ := jsontree.Marshal(ping.EncodeValue(wire.AllRevisions)); string(b) != "{}" {
		t.Errorf("Ping encodes as %s", b)
	}
	lvl, err := l.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevelInfo})
	if err != nil || lvl == nil {
		t.Errorf("SetLevel = %v, %v", lvl, err)
	} else if b, _ := jsontree.Marshal(lvl.EncodeValue(wire.AllRevisions)); string(b) != "{}" {
		t.Errorf("SetLevel encodes as %s", b)
	}
	notifications := []struct {
		name string
		err  error
	}{
		{"OnInitialized", l.OnInitialized(ctx, nil)},
		{"OnCancelled", l.OnCancelled(ctx, &mcp.CancelledNotificationParams{})},
		{"OnProgress", l.OnProgress(ctx, &mcp.ProgressNotificationParams{})},
		{"OnRootsListChanged", l.OnRootsListChanged(ctx, nil)},
		{"OnTaskStatus", l.OnTaskStatus(ctx, &mcp.TaskStatusNotificationParams{})},
	}
	for _, n := range notifications {
		if n.err != nil {
			t.Errorf("%s = %v", n.name, n.err)
		}
	}
	_, e1 := l.CancelTask(ctx, nil)
	_, e2 := l.GetTask(ctx, nil)
	_, e3 := l.GetTaskPayload(ctx, nil)
	_, e4 := l.ListTasks(ctx, nil)
	_, e5 := l.SubscriptionsListen(ctx, nil)
	_, e6 := l.UpdateTask(ctx, nil)
	for i, err := range []error{e1, e2, e3, e4, e5, e6} {
		if err != wire.ErrMethodNotFound {
			t.Errorf("method %d: %v, want Method not found", i, err)
		}
	}
}

// Lifecycle plus the application methods is a whole Handler: Lifecycle
// answers none of them.
type app struct{ Lifecycle }

func (app) CallTool(context.Context, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	return nil, nil
}
func (app) Complete(context.Context, *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	return nil, nil
}
func (app) Discover(context.Context, *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	return nil, nil
}
func (app) GetPrompt(context.Context, *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	return nil, nil
}
func (app) Initialize(context.Context, *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return nil, nil
}
func (app) ListPrompts(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	return nil, nil
}
func (app) ListResourceTemplates(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	return nil, nil
}
func (app) ListResources(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	return nil, nil
}
func (app) ListTools(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	return nil, nil
}
func (app) ReadResource(context.Context, *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	return nil, nil
}
func (app) Subscribe(context.Context, *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	return nil, nil
}
func (app) Unsubscribe(context.Context, *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	return nil, nil
}

var _ mcp.Handler = app{}
