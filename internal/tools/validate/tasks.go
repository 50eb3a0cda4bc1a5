package validate

import (
	"fmt"

	"github.com/mcpstack/mcpstack/wire"
)

// Tasks of 2025-11-25: a task-augmented request is answered with a
// CreateTaskResult and runs on. Its progress token stays valid until the
// task ends; its status moves forward and a terminal one never changes;
// tasks/result answers what the request would have (its result
// definition), with the related-task _meta naming the task.
//
// The tasks extension of 2026-07-28: the server answers a request the
// method table lets run as a task (protocol.Method.TaskExtension) with a flat
// CreateTaskResult, resultType "task", and only to a request whose
// clientCapabilities declare the extension; tasks/get reports the status
// (checked as above) with the result inlined, and its schema is the
// extension's (the revision's table carries it).

const (
	resultTypeTask    = "task"
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksCancel = "tasks/cancel"
	methodTasksUpdate = "tasks/update"
	methodTaskStatus  = "notifications/tasks/status"
	// maxTasksPerSession bounds what the checker keeps of one session.
	maxTasksPerSession = 4096
)

// taskState is what the checker knows of one task.
type taskState struct {
	method    string // the request that created it
	status    string
	line      int  // where the status was last seen
	requester side // who created it
	req       *openReq
}

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// taskCreated records the task a CreateTaskResult returns, and keeps the
// request's progress token open for the task's life.
func (c *checker) taskCreated(sess *session, it *item, o *openReq, r side, result map[string]any) {
	t, nested := result["task"].(map[string]any) // 2025-11-25; the extension's is flat
	if !nested {
		t = result
	}
	id, _ := t["taskId"].(string)
	if id == "" {
		return
	}
	if sess.tasks == nil {
		sess.tasks = map[string]*taskState{}
	}
	if len(sess.tasks) >= maxTasksPerSession {
		return
	}
	status, _ := t["status"].(string)
	sess.tasks[id] = &taskState{method: o.method, status: status, line: it.line, requester: r, req: o}
	if o.hasToken && !terminalStatus(status) {
		sess.tokens[r][o.token] = o
	}
}

// taskStatus checks a status the task is reported in (a status
// notification, a tasks/get or tasks/cancel result) against the last one.
func (c *checker) taskStatus(sess *session, it *item, ptr, id, status string) {
	ts := sess.tasks[id]
	if ts == nil || status == "" {
		return
	}
	if terminalStatus(ts.status) && status != ts.status {
		it.finding(RuleTaskStatus, it.session, ptr, fmt.Sprintf("task %s is %s, but it was %s already at line %d: a task that ended does not change", id, status, ts.status, ts.line))
		return
	}
	ts.status, ts.line = status, it.line
	if terminalStatus(status) && ts.req.hasToken && sess.tokens[ts.requester][ts.req.token] == ts.req {
		delete(sess.tokens[ts.requester], ts.req.token)
	}
}

// taskNotified checks notifications/tasks/status.
func (c *checker) taskNotified(sess *session, it *item, m *message) {
	id, _ := m.params["taskId"].(string)
	status, _ := m.params["status"].(string)
	c.taskStatus(sess, it, m.ptr+"/params/status", id, status)
}

// taskAnswered checks the results of tasks/get, tasks/cancel and
// tasks/result; it reports whether it queued the result's schema check.
func (c *checker) taskAnswered(sess *session, it *item, m *message, o *openReq, rev *revision, result map[string]any) bool {
	switch o.method {
	case methodTasksGet, methodTasksCancel:
		status, _ := result["status"].(string)
		c.taskStatus(sess, it, m.ptr+"/result/status", o.taskID, status)
	case methodTasksResult:
		ts := sess.tasks[o.taskID]
		if ts == nil {
			return false
		}
		meta, _ := result["_meta"].(map[string]any)
		rel, _ := meta[wire.MetaRelatedTask].(map[string]any)
		if rel["taskId"] != o.taskID {
			it.finding(RuleTaskRelated, it.session, m.ptr+"/result/_meta", fmt.Sprintf("tasks/result for task %s lacks the %s _meta naming it", o.taskID, wire.MetaRelatedTask))
		}
		if md, ok := rev.spec.Method(ts.method); ok && md.Result != "" {
			it.jobs = append(it.jobs, job{rev: rev, def: md.Result, value: m.obj["result"], prefix: m.ptr + "/result", rule: RuleResultSchema,
				what: "tasks/result (the " + ts.method + " result of task " + o.taskID + ")"})
			return true
		}
	}
	return false
}

// declaresExtension reports whether a request's clientCapabilities
// declare an extension.
func declaresExtension(caps map[string]any, ext string) bool {
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[ext]
	return ok
}

// taskOf is the taskId a tasks/* request names ("" for others).
func taskOf(m *message) string {
	switch m.method {
	case methodTasksGet, methodTasksResult, methodTasksCancel, methodTasksUpdate:
		id, _ := m.params["taskId"].(string)
		return id
	}
	return ""
}
