package base

import (
	"context"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Lifecycle implements the mcp.Handler methods whose application-level answer
// is the same for every app. The server does the protocol work of each
// (answering ping, recording the level of logging/setLevel, cancelling the
// context of a cancelled request) before it calls the handler, so these only
// acknowledge. Override a method by declaring it on the embedding type.
//
// The tasks methods (2025-11-25) and subscriptions/listen (2026-07-28)
// answer -32601 Method not found until an app implements them.
type Lifecycle struct{}

// Ping answers {}.
func (Lifecycle) Ping(context.Context, *mcp.RequestParams) (*mcp.EmptyResult, error) {
	return &mcp.EmptyResult{}, nil
}

// SetLevel answers {}; the server has already recorded the level for the
// session (peer.Log filters by it).
func (Lifecycle) SetLevel(context.Context, *mcp.SetLevelRequestParams) (*mcp.EmptyResult, error) {
	return &mcp.EmptyResult{}, nil
}

// OnInitialized accepts notifications/initialized.
func (Lifecycle) OnInitialized(context.Context, *mcp.NotificationParams) error { return nil }

// OnCancelled accepts notifications/cancelled; the server has already
// cancelled the context of the request it names.
func (Lifecycle) OnCancelled(context.Context, *mcp.CancelledNotificationParams) error { return nil }

// OnProgress accepts progress the client reports about a server request.
func (Lifecycle) OnProgress(context.Context, *mcp.ProgressNotificationParams) error { return nil }

// OnRootsListChanged accepts notifications/roots/list_changed.
func (Lifecycle) OnRootsListChanged(context.Context, *mcp.NotificationParams) error { return nil }

// OnTaskStatus accepts notifications/tasks/status.
func (Lifecycle) OnTaskStatus(context.Context, *mcp.TaskStatusNotificationParams) error {
	return nil
}

// CancelTask answers -32601: no tasks.
func (Lifecycle) CancelTask(context.Context, *mcp.CancelTaskRequestParams) (*mcp.CancelTaskResult, error) {
	return nil, wire.ErrMethodNotFound
}

// GetTask answers -32601: no tasks.
func (Lifecycle) GetTask(context.Context, *mcp.GetTaskRequestParams) (*mcp.GetTaskResult, error) {
	return nil, wire.ErrMethodNotFound
}

// GetTaskPayload answers -32601: no tasks.
func (Lifecycle) GetTaskPayload(context.Context, *mcp.GetTaskPayloadRequestParams) (*mcp.GetTaskPayloadResult, error) {
	return nil, wire.ErrMethodNotFound
}

// UpdateTask answers -32601: no tasks.
func (Lifecycle) UpdateTask(context.Context, *mcp.UpdateTaskRequestParams) (*mcp.UpdateTaskResult, error) {
	return nil, wire.ErrMethodNotFound
}

// ListTasks answers -32601: no tasks.
func (Lifecycle) ListTasks(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListTasksResult, error) {
	return nil, wire.ErrMethodNotFound
}

// SubscriptionsListen answers -32601 for now.
func (Lifecycle) SubscriptionsListen(context.Context, *mcp.SubscriptionsListenRequestParams) (*mcp.SubscriptionsListenResult, error) {
	return nil, wire.ErrMethodNotFound
}
