package validate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/wire"
)

// Finding is one thing wrong with a log.
type Finding struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`              // 1-based line in File; 0 for the file as a whole
	Session  string   `json:"session,omitempty"` // the recording's session id
	Side     string   `json:"side,omitempty"`    // who sent the message: client or server ("" when not known)
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Pointer  string   `json:"pointer"` // JSON pointer into the message ("" for the whole message); for "record" into the line
	Reason   string   `json:"reason"`
	Excerpt  string   `json:"excerpt,omitempty"` // the offending message, shortened
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s:%d: %s %s", f.File, f.Line, f.Severity, f.Rule)
	if f.Side != "" {
		s += " (" + f.Side + ")"
	}
	if f.Session != "" {
		s += " [session " + f.Session + "]"
	}
	if f.Pointer != "" {
		s += " at " + f.Pointer
	}
	return s + ": " + f.Reason
}

// InputError is an input that could not be read (exit 2).
type InputError struct {
	Name string
	Err  error
}

func (e *InputError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Report is the outcome of a Check.
type Report struct {
	// Findings, in the order of the logs and their lines (a log's
	// end-of-log findings after its last line). Left empty when a
	// finding handler is set (WithFindingHandler).
	Findings []Finding
	Inputs   int   // logs read
	Lines    int64 // non-blank lines
	Messages int64 // JSON-RPC messages (a batch counts its elements)
	Sessions int64
	Bytes    int64 // bytes of the lines (after gzip)
	Errors   int   // findings of severity error
	Warnings int
	// Stopped is set when --max-errors ended the run early.
	Stopped bool
	// InputErrors are the logs that could not be read, or not to the end.
	InputErrors []*InputError
	Elapsed     time.Duration
}

// Failed reports whether the report fails a run: an error finding, or a
// warning when failOn is Warning.
func (r *Report) Failed(failOn Severity) bool {
	return r.Errors > 0 || (failOn == Warning && r.Warnings > 0)
}

// Option configures a Validator.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	format    Format
	revision  string
	rules     RuleSet
	maxErrors int
	workers   int
	maxLine   int
	onFinding func(Finding)
	side      string // WithSide
	live      bool   // WithLive

	maxLiveSessions int // tests: the compaction threshold of state.go
	maxOpenAcross   int // tests: the bound on the open requests of all sessions
}

// WithFormat sets the format of the inputs that do not set their own
// (default FormatAuto).
func WithFormat(f Format) Option { return optionFunc(func(c *config) { c.format = f }) }

// WithRevision sets the revision of sessions whose log does not tell it
// (no initialize, no params._meta protocolVersion). A log that tells its
// revision is checked against that one.
func WithRevision(rev string) Option { return optionFunc(func(c *config) { c.revision = rev }) }

// WithRules chooses the rules (default all).
func WithRules(s RuleSet) Option { return optionFunc(func(c *config) { c.rules = s }) }

// WithMaxErrors stops a run after n error findings (0, the default: never).
func WithMaxErrors(n int) Option { return optionFunc(func(c *config) { c.maxErrors = n }) }

// WithWorkers sets how many goroutines parse and validate (default
// GOMAXPROCS).
func WithWorkers(n int) Option { return optionFunc(func(c *config) { c.workers = n }) }

// WithMaxLine bounds a line (default 64 MiB); a longer one is a finding
// and is skipped without being held in memory.
func WithMaxLine(n int) Option { return optionFunc(func(c *config) { c.maxLine = n }) }

// WithSide keeps only the findings on what one side sent ("client" or
// "server"; those of no side, about the log as a whole, stay): a
// server's authors check their server alone.
func WithSide(side string) Option { return optionFunc(func(c *config) { c.side = side }) }

// WithLive checks each line as soon as it is read, for an input that is
// a live stream (mcpstack proxy --check): its findings come as its
// messages do, not once a chunk of lines has filled. It costs the
// parallel parsing a large log gets.
func WithLive() Option { return optionFunc(func(c *config) { c.live = true }) }

// WithFindingHandler streams findings to h, in order, as the run goes,
// instead of collecting them in the Report. h is called from one goroutine
// at a time.
func WithFindingHandler(h func(Finding)) Option {
	return optionFunc(func(c *config) { c.onFinding = h })
}

// Validator checks message logs. It is safe for concurrent use.
type Validator struct {
	cfg config
}

// New returns a Validator. It fails on a revision it does not know.
func New(opts ...Option) (*Validator, error) {
	cfg := config{format: FormatAuto, maxLine: 64 << 20}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.workers <= 0 {
		cfg.workers = runtime.GOMAXPROCS(0)
	}
	if cfg.maxLine <= 0 {
		cfg.maxLine = 64 << 20
	}
	if cfg.format == "" {
		cfg.format = FormatAuto
	}
	if _, err := ParseFormat(string(cfg.format)); err != nil {
		return nil, err
	}
	if cfg.revision != "" {
		r := lookupRevision(cfg.revision)
		if r == nil {
			return nil, fmt.Errorf("unknown revision %q (supported: %v)", cfg.revision, revisionNames())
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if ext := loadExt(); ext.err != nil {
		return nil, fmt.Errorf("schema/ext: %w", ext.err)
	}
	return &Validator{cfg: cfg}, nil
}

// Check reads the inputs one after another and checks every line. Lines
// are parsed and validated in parallel; the rules that need the history
// of a session run in order, and findings come out in the order of the
// inputs and their lines. Memory stays bounded whatever the size of the
// logs (it grows with the sessions and requests open at a time, not with
// the lines).
func (v *Validator) Check(ctx context.Context, inputs []Input) Report {
	start := time.Now()
	r := &run{cfg: v.cfg, ctx: ctx, inputs: inputs, ext: loadExt()}
	rep := r.do()
	rep.Elapsed = time.Since(start)
	return rep
}

// run is one Check.
type run struct {
	cfg    config
	ctx    context.Context
	inputs []Input
	ext    *extSchemas
	stop   atomic.Bool
}

func (r *run) do() Report {
	var rep Report
	rep.Inputs = len(r.inputs)
	read := make(chan *chunk, 2)
	go r.read(read)
	parsed := ordered(read, r.cfg.workers, func(c *chunk) {
		for i := range c.items {
			parseItem(&c.items[i], r.ext)
		}
	})
	seq := make(chan *chunk, 2)
	go r.sequence(parsed, seq)
	checked := ordered(seq, r.cfg.workers, func(c *chunk) {
		for i := range c.items {
			runJobs(&c.items[i], r.cfg.rules)
		}
	})
	deliver := func(f Finding) {
		if r.stop.Load() || r.cfg.side != "" && f.Side != "" && f.Side != r.cfg.side {
			return
		}
		switch f.Severity {
		case Error:
			rep.Errors++
		default:
			rep.Warnings++
		}
		if r.cfg.onFinding != nil {
			r.cfg.onFinding(f)
		} else {
			rep.Findings = append(rep.Findings, f)
		}
		if r.cfg.maxErrors > 0 && rep.Errors >= r.cfg.maxErrors {
			rep.Stopped = true
			r.stop.Store(true)
		}
	}
	type logOf struct {
		input int
		name  string
	}
	messages := map[logOf]int64{}         // of each log: a pair's two sides apart
	broken := make([]bool, len(r.inputs)) // an input that could not be read
	for c := range checked {
		for i := range c.items {
			it := &c.items[i]
			rep.Lines++
			rep.Bytes += int64(len(it.data)) + 1
			rep.Messages += int64(len(it.msgs))
			messages[logOf{c.input, it.name}] += int64(len(it.msgs))
			for _, f := range it.findings {
				if r.cfg.rules.Enabled(f.Rule) {
					deliver(f)
				}
			}
		}
		rep.Sessions += int64(c.sessions)
		for _, f := range c.tail {
			if r.cfg.rules.Enabled(f.Rule) {
				deliver(f)
			}
		}
		if c.ioErr != nil {
			rep.InputErrors = append(rep.InputErrors, c.ioErr)
			if c.input < len(broken) {
				broken[c.input] = true
			}
		}
	}
	// A capture that recorded nothing (a proxy that never saw the
	// traffic, an empty file) must not pass as valid, beside others that
	// did or alone.
	if r.ctx.Err() == nil && !rep.Stopped && r.cfg.rules.Enabled(RuleEmpty) {
		for i, in := range r.inputs {
			if broken[i] {
				continue
			}
			logs := []string{in.Name}
			if in.Server != nil {
				logs = append(logs, in.Server.Name) // each side of a pair: one that recorded nothing is broken
			}
			for _, name := range logs {
				if messages[logOf{i, name}] == 0 {
					deliver(Finding{File: name, Rule: RuleEmpty, Severity: ruleByID[RuleEmpty].Severity,
						Reason: "the log holds no message: a capture that recorded nothing proves nothing"})
				}
			}
		}
	}
	if len(r.inputs) == 0 && rep.Messages == 0 && r.ctx.Err() == nil && r.cfg.rules.Enabled(RuleEmpty) {
		deliver(Finding{Rule: RuleEmpty, Severity: ruleByID[RuleEmpty].Severity,
			Reason: "the log holds no message: a capture that recorded nothing proves nothing"})
	}
	return rep
}

// sequence is the ordered middle stage: the per-session state machines of
// the current input.
func (r *run) sequence(in <-chan *chunk, out chan<- *chunk) {
	defer close(out)
	var st *checker
	for c := range in {
		if st == nil || st.input != c.input {
			st = newChecker(c.input, r.cfg)
		}
		for i := range c.items {
			st.item(&c.items[i])
		}
		if c.end {
			c.tail = st.finish()
			sort.SliceStable(c.tail, func(i, j int) bool { return c.tail[i].Line < c.tail[j].Line })
		}
		c.sessions = st.takeNewSessions()
		out <- c
	}
}

// runJobs is the parallel last stage: the schema validations the state
// machine asked for, then the excerpts of the item's findings.
func runJobs(it *item, rules RuleSet) {
	for _, j := range it.jobs {
		if !rules.Enabled(j.rule) {
			continue
		}
		if err := j.rev.spec.Validate(j.def, j.value); err != nil { // the generated validator first
			ptr, reason := "", err.Error()
			var ve *wire.ValidationError
			if errors.As(err, &ve) {
				ptr, reason = ve.Pointer, ve.Reason
			}
			it.finding(j.rule, it.session, j.prefix+ptr, fmt.Sprintf("%s (%s: %s, %s)", reason, j.what, j.def, j.rev.name()))
		}
	}
	it.jobs = nil
	if len(it.findings) > 0 {
		raw := it.raw
		if raw == nil {
			raw = it.data
		}
		var msgEx, lineEx string
		for i := range it.findings {
			f := &it.findings[i]
			if f.Line != it.line || f.File != it.name {
				continue // about an earlier line (unanswered at a shutdown)
			}
			if f.Rule == RuleRecord {
				if lineEx == "" {
					lineEx = excerpt(it.data)
				}
				f.Excerpt = lineEx
				continue
			}
			if msgEx == "" {
				msgEx = excerpt(raw)
			}
			f.Excerpt = msgEx
		}
	}
	// The tree is no longer needed: let it go before the chunk is emitted.
	it.tree = nil
	for i := range it.msgs {
		it.msgs[i].obj, it.msgs[i].params = nil, nil
	}
}
