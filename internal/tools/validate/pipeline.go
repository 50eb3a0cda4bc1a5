package validate

import (
	"strings"
	"unicode/utf8"
)

// A run moves logs through three stages in chunks of lines:
//
//	read (1 goroutine) -> parse (N workers) -> sequence (1) -> validate (N workers) -> emit (1)
//
// The parallel stages keep the order of the chunks (ordered), so the
// sequencer sees every line in log order and findings come out in log
// order. Channels are short: at most a few chunks per stage are in
// memory, whatever the size of the logs.

const (
	chunkLines = 512
	chunkBytes = 256 << 10
)

// chunk is a run of lines of one input.
type chunk struct {
	input    int
	items    []item
	buf      []byte
	offs     []int // start of each item's line in buf
	end      bool  // the input's last chunk: its end-of-log findings follow
	ioErr    *InputError
	tail     []Finding // end-of-log findings
	sessions int       // sessions that began in this chunk
}

func newChunk(input int) *chunk {
	return &chunk{input: input, items: make([]item, 0, 64), buf: make([]byte, 0, 64<<10)}
}

// newLineChunk is a chunk for one line (WithLive): sized for it.
func newLineChunk(input int) *chunk {
	return &chunk{input: input, items: make([]item, 0, 1)}
}

// add copies a line into the chunk.
func (c *chunk) add(it item, data []byte) {
	c.offs = append(c.offs, len(c.buf))
	c.buf = append(c.buf, data...)
	c.items = append(c.items, it)
}

func (c *chunk) full() bool { return len(c.items) >= chunkLines || len(c.buf) >= chunkBytes }

// seal points the items at their bytes once buf no longer moves.
func (c *chunk) seal() {
	for i := range c.items {
		end := len(c.buf)
		if i+1 < len(c.offs) {
			end = c.offs[i+1]
		}
		c.items[i].data = c.buf[c.offs[i]:end:end]
		if c.items[i].parsed && c.items[i].raw == nil {
			c.items[i].raw = c.items[i].data
		}
	}
}

// ordered runs fn on every chunk with n workers and passes the chunks on
// in the order they came.
func ordered(in <-chan *chunk, n int, fn func(*chunk)) <-chan *chunk {
	type job struct {
		c    *chunk
		done chan *chunk
	}
	out := make(chan *chunk, n)
	queue := make(chan chan *chunk, 2*n)
	jobs := make(chan job, n)
	go func() {
		for c := range in {
			done := make(chan *chunk, 1)
			queue <- done
			jobs <- job{c, done}
		}
		close(jobs)
		close(queue)
	}()
	for i := 0; i < n; i++ {
		go func() {
			for j := range jobs {
				fn(j.c)
				j.done <- j.c
			}
		}()
	}
	go func() {
		for done := range queue {
			out <- <-done
		}
		close(out)
	}()
	return out
}

// read is the first stage: every input, line by line, into chunks.
func (r *run) read(out chan<- *chunk) {
	defer close(out)
	for i, in := range r.inputs {
		if r.stopped() {
			return
		}
		if in.Server != nil {
			r.readPair(i, in, out)
		} else {
			r.readOne(i, in, out)
		}
	}
}

func (r *run) stopped() bool { return r.stop.Load() || r.ctx.Err() != nil }

func (r *run) readOne(idx int, in Input, out chan<- *chunk) {
	rc, err := openLog(in)
	if err != nil {
		out <- &chunk{input: idx, end: true, ioErr: &InputError{Name: in.Name, Err: err}}
		return
	}
	defer rc.Close()
	format := in.Format
	if format == "" {
		format = r.cfg.format
	}
	var lr lineSource = newLineReader(rc, r.cfg.maxLine)
	if isHAR(in, format, rc) {
		h, err := readHAR(rc, r.cfg.maxLine)
		if err != nil {
			out <- &chunk{input: idx, end: true, ioErr: &InputError{Name: in.Name, Err: err}}
			return
		}
		lr, format = h, FormatRecorded
	}
	fresh := newChunk
	if r.cfg.live {
		fresh = newLineChunk
	}
	c := fresh(idx)
	for !r.stopped() {
		data, line, long, ok := lr.next()
		if !ok {
			break
		}
		c.add(item{name: in.Name, line: line, tooLong: long, dir: unknown}, data)
		if c.full() || r.cfg.live {
			format = decideFormat(c, format)
			c.seal()
			out <- c
			c = fresh(idx)
		}
	}
	decideFormat(c, format)
	c.seal()
	c.end = true
	if err := lr.failure(); err != nil {
		c.ioErr = &InputError{Name: in.Name, Err: err}
	}
	out <- c
}

// decideFormat sets the format of a chunk's lines. An auto format is
// decided by the first line that is JSON; when a chunk has none, its lines
// are read as plain JSON Lines and the next chunk decides again.
func decideFormat(c *chunk, f Format) Format {
	if f == FormatAuto {
		for i := range c.items {
			if c.items[i].tooLong {
				continue
			}
			start, end := c.offs[i], len(c.buf)
			if i+1 < len(c.offs) {
				end = c.offs[i+1]
			}
			if d, ok := detectFormat(c.buf[start:end]); ok {
				f = d
				break
			}
		}
	}
	use := f
	if use == FormatAuto {
		use = FormatJSONL
	}
	for i := range c.items {
		c.items[i].format = use
	}
	return f
}

// excerpt shortens a message for a finding: at most about 200 bytes, on
// one line, valid UTF-8.
func excerpt(b []byte) string {
	const head, tail = 150, 40
	var s string
	if len(b) <= head+tail+10 {
		s = string(b)
	} else {
		h := head
		for h > 0 && !utf8.RuneStart(b[h]) {
			h--
		}
		t := len(b) - tail
		for t < len(b) && !utf8.RuneStart(b[t]) {
			t++
		}
		s = string(b[:h]) + " … " + string(b[t:])
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
