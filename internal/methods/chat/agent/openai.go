package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// OpenAIName names the OpenAI-compatible provider.
const OpenAIName = "openai"

// Defaults of OpenAIConfig.
const (
	DefaultOpenAIBaseURL     = "https://api.openai.com/v1"
	DefaultOpenAIModel       = "gpt-4o-mini"
	DefaultOpenAITimeout     = 2 * time.Minute
	DefaultOpenAIIdleTimeout = 30 * time.Second
	DefaultOpenAIRetries     = 2
	DefaultOpenAIBackoff     = 500 * time.Millisecond
	maxRetryAfter            = 30 * time.Second
	maxErrorBody             = 64 << 10
	maxSSELine               = 4 << 20
)

// OpenAIConfig configures the OpenAI-compatible provider. Zero values take
// the defaults above.
type OpenAIConfig struct {
	// BaseURL is the API root, the part before /chat/completions:
	// https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama),
	// http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:8080/v1
	// (llama.cpp), http://127.0.0.1:4000/v1 (LiteLLM).
	BaseURL string
	Model   string
	// APIKey is sent as a bearer token when set (see APIKeyFromEnv).
	APIKey string
	// Timeout bounds one attempt, from the request to the end of the
	// stream.
	Timeout time.Duration
	// IdleTimeout bounds the silence between two chunks of a stream (and
	// the wait for the response headers).
	IdleTimeout time.Duration
	// Retries is how many times a failed attempt is tried again (negative:
	// never). Only attempts that failed before any of the answer was
	// streamed are retried: connection errors, 408, 409, 429, 5xx, and
	// streams cut before their first fragment.
	Retries int
	// Backoff is the wait before the first retry, doubled for each next
	// one; a Retry-After header (up to 30s) takes precedence.
	Backoff time.Duration
	// MaxTokens caps the answer when the Request sets no cap (0: no cap).
	MaxTokens int64
	// Temperature, when set, is sent.
	Temperature *float64
	// NoStream asks for a whole answer instead of a stream.
	NoStream bool
	// NoStreamUsage leaves out stream_options.include_usage, for servers
	// that reject it; usage is then estimated.
	NoStreamUsage bool
	// HTTPClient is the client (default: a new http.Client without an
	// overall timeout; Timeout applies per attempt).
	HTTPClient *http.Client
}

// APIKeyFromEnv returns MCPSTACK_OPENAI_API_KEY, else OPENAI_API_KEY.
func APIKeyFromEnv(getenv func(string) string) string {
	if k := getenv("MCPSTACK_OPENAI_API_KEY"); k != "" {
		return k
	}
	return getenv("OPENAI_API_KEY")
}

// OpenAI talks to an OpenAI-compatible /chat/completions endpoint.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	err      error // why the provider cannot be used at all
}

// NewOpenAI returns the provider. A bad base URL, or the official OpenAI
// API without a key, makes a provider that is always unavailable (so a
// fallback list can name it unconditionally).
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultOpenAITimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultOpenAIIdleTimeout
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultOpenAIRetries
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultOpenAIBackoff
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	o := &OpenAI{cfg: cfg}
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		o.err = unavailable("base URL %q is not an http(s) URL", cfg.BaseURL)
	case cfg.APIKey == "" && strings.EqualFold(u.Hostname(), "api.openai.com"):
		o.err = unavailable("no API key for %s (set MCPSTACK_OPENAI_API_KEY or OPENAI_API_KEY)", u.Host)
	default:
		o.endpoint = u.String() + "/chat/completions"
	}
	return o
}

// Name is "openai".
func (*OpenAI) Name() string { return OpenAIName }

// Config returns the configuration in effect (defaults filled in).
func (o *OpenAI) Config() OpenAIConfig { return o.cfg }

// HTTPError is an answer with an error status.
type HTTPError struct {
	Status     int
	Message    string        // the API's error message, or the body's start
	RetryAfter time.Duration // from a Retry-After header
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

func (e *HTTPError) retryable() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusConflict ||
		e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// ErrStreamCut is returned when a stream ends without [DONE] or a finish
// reason: the connection was lost midway.
var ErrStreamCut = errors.New("the stream ended before the answer was complete")

// ErrIdle is returned when the endpoint stays silent longer than the idle
// timeout.
var ErrIdle = errors.New("no data from the endpoint within the idle timeout")

// APIError is an error object the endpoint sent inside a stream or body.
type APIError struct {
	Message string
	Type    string
	Code    string
}

func (e *APIError) Error() string {
	s := e.Message
	if e.Type != "" || e.Code != "" {
		s += " (" + strings.Trim(e.Type+" "+e.Code, " ") + ")"
	}
	return "API error: " + s
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []chatMessage  `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	MaxTokens     int64          `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type apiUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type apiErrorBody struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (b *apiErrorBody) err() *APIError {
	code := strings.Trim(string(b.Code), `"`)
	if code == "null" {
		code = ""
	}
	return &APIError{Message: b.Message, Type: b.Type, Code: code}
}

// chunk is one streamed event, or a whole non-streamed answer.
type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content *string `json:"content"`
		} `json:"delta"`
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *apiUsage     `json:"usage"`
	Error *apiErrorBody `json:"error"`
}

// Generate asks the endpoint, streaming, retrying as configured.
func (o *OpenAI) Generate(ctx context.Context, req *Request, onDelta DeltaFunc) (*Response, error) {
	if o.err != nil {
		return nil, o.err
	}
	body, err := o.body(req)
	if err != nil {
		return nil, err
	}
	var streamed strings.Builder
	deliver := func(d string) error {
		streamed.WriteString(d)
		return onDelta(d)
	}
	for attempt := 0; ; attempt++ {
		resp, err := o.attempt(ctx, body, req, deliver)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if streamed.Len() > 0 {
			return nil, &PartialError{Provider: OpenAIName, Streamed: streamed.String(), Err: err}
		}
		if attempt >= o.cfg.Retries || !retryable(err) {
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		wait := o.cfg.Backoff << attempt
		var he *HTTPError
		if errors.As(err, &he) && he.RetryAfter > 0 {
			wait = he.RetryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.retryable()
	}
	var ae *APIError
	if errors.As(err, &ae) {
		// An error event in a stream: overloads and server errors are
		// worth another try, bad requests are not.
		t := strings.ToLower(ae.Type + " " + ae.Code)
		return strings.Contains(t, "server") || strings.Contains(t, "overload") || strings.Contains(t, "rate") || strings.Contains(t, "timeout")
	}
	var perm *permanentError
	return !errors.As(err, &perm)
}

// permanentError is a failure that another attempt would repeat (a body
// that is not what the API promises).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func (o *OpenAI) body(req *Request) ([]byte, error) {
	cr := chatRequest{Model: o.cfg.Model, Stream: !o.cfg.NoStream, MaxTokens: req.MaxTokens, Temperature: o.cfg.Temperature}
	if cr.MaxTokens <= 0 {
		cr.MaxTokens = o.cfg.MaxTokens
	}
	if cr.Stream && !o.cfg.NoStreamUsage {
		cr.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.System != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		cr.Messages = append(cr.Messages, chatMessage{Role: m.Role, Content: m.Content})
	}
	return json.Marshal(cr)
}

// attempt makes one request and reads its answer.
func (o *OpenAI) attempt(ctx context.Context, body []byte, req *Request, deliver DeltaFunc) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	// The idle timer cancels the attempt when the endpoint goes silent.
	var idled atomic.Bool
	idle := time.AfterFunc(o.cfg.IdleTimeout, func() { idled.Store(true); cancel() })
	defer idle.Stop()
	wrap := func(err error) error {
		if idled.Load() {
			return ErrIdle
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return fmt.Errorf("no complete answer within %s", o.cfg.Timeout)
		}
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &permanentError{err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if o.cfg.NoStream {
		hreq.Header.Set("Accept", "application/json")
	} else {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	if o.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	hresp, err := o.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return nil, wrap(err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		return nil, httpError(hresp)
	}
	mt, _, _ := mime.ParseMediaType(hresp.Header.Get("Content-Type"))
	var resp *Response
	if mt == "text/event-stream" {
		resp, err = o.readStream(hresp.Body, req, deliver, func() { idle.Reset(o.cfg.IdleTimeout) })
	} else {
		// Not a stream (NoStream, or a server that ignores "stream"):
		// one JSON answer.
		resp, err = o.readWhole(hresp.Body, req, deliver)
	}
	if err != nil {
		return nil, wrap(err)
	}
	return resp, nil
}

func httpError(r *http.Response) *HTTPError {
	b, _ := io.ReadAll(io.LimitReader(r.Body, maxErrorBody))
	e := &HTTPError{Status: r.StatusCode}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && len(body.Error) > 0 {
		var eb apiErrorBody
		var s string
		if json.Unmarshal(body.Error, &eb) == nil && eb.Message != "" {
			e.Message = eb.err().Error()
		} else if json.Unmarshal(body.Error, &s) == nil {
			e.Message = s
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(b))
		if len(e.Message) > 300 {
			e.Message = e.Message[:300] + "..."
		}
		if e.Message == "" {
			e.Message = http.StatusText(r.StatusCode)
		}
	}
	if ra := r.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = time.Until(t)
		}
		e.RetryAfter = min(max(e.RetryAfter, 0), maxRetryAfter)
	}
	return e
}

// readStream reads Server-Sent Events: "data:" lines, an empty line
// ending each event, until "data: [DONE]". Comments (":"), "event:",
// "id:" and "retry:" lines are ignored. alive is called for every line.
func (o *OpenAI) readStream(r io.Reader, req *Request, deliver DeltaFunc, alive func()) (*Response, error) {
	resp := &Response{Provider: OpenAIName, Model: o.cfg.Model}
	var text strings.Builder
	var usage *apiUsage
	finished, done := false, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	var data []string
	dispatch := func() error {
		if len(data) == 0 {
			return nil
		}
		payload := strings.Join(data, "\n")
		data = data[:0]
		if strings.TrimSpace(payload) == "[DONE]" {
			done = true
			return nil
		}
		var c chunk
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			return &permanentError{fmt.Errorf("bad stream chunk %.200q: %v", payload, err)}
		}
		if c.Error != nil {
			return c.Error.err()
		}
		if c.Model != "" {
			resp.Model = c.Model
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if d := ch.Delta.Content; d != nil && *d != "" {
				text.WriteString(*d)
				if err := deliver(*d); err != nil {
					return err
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finished = true
				resp.StopReason = *ch.FinishReason
			}
		}
		return nil
	}
	for !done && sc.Scan() {
		alive()
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			if err := dispatch(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			v := strings.TrimPrefix(line, "data:")
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !done {
		// A last event without its blank line still counts.
		if err := dispatch(); err != nil {
			return nil, err
		}
	}
	if !done && !finished {
		return nil, ErrStreamCut
	}
	resp.Text = text.String()
	resp.Usage = o.usage(usage, req, resp.Text)
	return resp, nil
}

func (o *OpenAI) readWhole(r io.Reader, req *Request, deliver DeltaFunc) (*Response, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, err
	}
	var c chunk
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, &permanentError{fmt.Errorf("bad answer %.200q: %v", b, err)}
	}
	if c.Error != nil {
		return nil, c.Error.err()
	}
	if len(c.Choices) == 0 || c.Choices[0].Message.Content == nil {
		return nil, &permanentError{errors.New("the answer has no message")}
	}
	resp := &Response{Provider: OpenAIName, Model: o.cfg.Model, Text: *c.Choices[0].Message.Content}
	if c.Model != "" {
		resp.Model = c.Model
	}
	if fr := c.Choices[0].FinishReason; fr != nil {
		resp.StopReason = *fr
	}
	if resp.Text != "" {
		if err := deliver(resp.Text); err != nil {
			return nil, err
		}
	}
	resp.Usage = o.usage(c.Usage, req, resp.Text)
	return resp, nil
}

func (o *OpenAI) usage(u *apiUsage, req *Request, text string) Usage {
	if u == nil || (u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0) {
		return estimateUsage(req, text)
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: total}
}
