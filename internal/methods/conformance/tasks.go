package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
)

// The fixtures of the tasks scenarios (the 2026-07-28 tasks extension,
// SEP-2663; the suite's tasks-* scenarios). The server decides which calls
// become tasks: a call of a tool that supports tasks, from a client that
// declares the extension, that runs longer than the task delay
// (server.WithTaskDelay, 100 ms by default). The fixtures that must become
// tasks work longer than that before they ask for input or end.
const (
	ToolGreet            = "greet"
	ToolSlowCompute      = "slow_compute"
	ToolFailingJob       = "failing_job"
	ToolProtocolErrorJob = "protocol_error_job"
	ToolConfirmDelete    = "confirm_delete"
	ToolMultiInput       = "multi_input"
	ToolTaskAfterInput   = "test_tool_with_task"
)

// Input keys of the task fixtures.
const (
	KeyFirstName  = "first"
	KeySecondName = "second"
)

// taskWork is how long a task fixture works before it asks or ends, in
// steps (50 ms by default): well past the task delay.
const taskWork = 20

func taskTools() []*tool {
	none := objectSchema(nil)
	return []*tool{
		{def: app.Tool{Name: ToolGreet, Description: "Greets name at once (never a task).",
			InputSchema: objectSchema(map[string]any{"name": map[string]any{"type": "string"}}, "name")},
			run: func(_ *Fixtures, _ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
				name, _ := args["name"].(string)
				return result(text("Hello, " + name + "!")), nil
			}},
		{def: app.Tool{Name: ToolSlowCompute, TaskSupport: "optional",
			Description: "Works for seconds, then says so; cancelled, it stops. May run as a task.",
			InputSchema: objectSchema(map[string]any{"seconds": map[string]any{"type": "number", "minimum": 0, "maximum": 3600}, "label": map[string]any{"type": "string"}}, "seconds")},
			run: (*Fixtures).runSlowCompute},
		{def: app.Tool{Name: ToolFailingJob, TaskSupport: "required", InputSchema: none,
			Description: "Works for a second, then reports a tool error (isError). Runs only as a task."},
			run: func(f *Fixtures, ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
				if err := sleep(ctx, taskWork*f.step); err != nil {
					return nil, err
				}
				return app.ToolError("The job failed: the input could not be processed."), nil
			}},
		{def: app.Tool{Name: ToolProtocolErrorJob, TaskSupport: "optional", InputSchema: none,
			Description: "Works for a second, then crashes (a panic, which the server answers -32603). May run as a task."},
			run: func(f *Fixtures, ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
				if err := sleep(ctx, taskWork*f.step); err != nil {
					return nil, err
				}
				panic("protocol_error_job: crashed on purpose")
			}},
		{def: app.Tool{Name: ToolConfirmDelete, TaskSupport: "optional",
			Description: "Works for a second, then asks the user to confirm deleting filename (input confirm). May run as a task.",
			InputSchema: objectSchema(map[string]any{"filename": map[string]any{"type": "string"}}, "filename")},
			run: (*Fixtures).runConfirmDelete},
		{def: app.Tool{Name: ToolMultiInput, TaskSupport: "optional", InputSchema: none,
			Description: "Works for a second, then asks two questions at once (inputs first and second). May run as a task."},
			run: (*Fixtures).runMultiInput},
		{def: app.Tool{Name: ToolTaskAfterInput, TaskSupport: "required", InputSchema: none,
			Description: "Asks the user's name at once (input user_name), then works for a second and greets them. Runs only as a task."},
			run: (*Fixtures).runTaskAfterInput},
	}
}

func (f *Fixtures) runSlowCompute(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
	seconds, _ := args["seconds"].(float64)
	label, _ := args["label"].(string)
	if err := sleep(ctx, time.Duration(seconds*float64(time.Second))); err != nil {
		return nil, err
	}
	return result(text(fmt.Sprintf("Computed %s in %gs.", label, seconds))), nil
}

func (f *Fixtures) runConfirmDelete(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
	filename, _ := args["filename"].(string)
	if err := sleep(ctx, taskWork*f.step); err != nil {
		return nil, err
	}
	ok, res, err := askField[bool](ctx, KeyConfirm, "Delete "+filename+"?", "confirm")
	if res != nil || err != nil {
		return res, err
	}
	if !ok {
		return result(text("Kept " + filename + ".")), nil
	}
	return result(text("Deleted " + filename + ".")), nil
}

func (f *Fixtures) runMultiInput(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	if err := sleep(ctx, taskWork*f.step); err != nil {
		return nil, err
	}
	answers, res, err := ask(ctx, "elicitation", map[string]peer.Input{
		KeyFirstName:  formInput("First name?", "name", "string"),
		KeySecondName: formInput("Second name?", "name", "string"),
	})
	if res != nil || err != nil {
		return res, err
	}
	first, res := formValue[string](answers, KeyFirstName, "name")
	if res != nil {
		return res, nil
	}
	second, res := formValue[string](answers, KeySecondName, "name")
	if res != nil {
		return res, nil
	}
	return result(text(fmt.Sprintf("Got %s and %s.", first, second))), nil
}

func (f *Fixtures) runTaskAfterInput(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	name, res, err := askField[string](ctx, KeyUserName, NameQuestion, "name")
	if res != nil || err != nil {
		return res, err
	}
	if err := sleep(ctx, taskWork*f.step); err != nil {
		return nil, err
	}
	return result(text("Hello, " + name + "! The task is done.")), nil
}
