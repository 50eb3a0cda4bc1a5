package validate

import (
	"github.com/mcpstack/mcpstack/wire"
)

// A stdio pair is two captures without timestamps: what the client wrote
// (the server's stdin) and what the server wrote (its stdout). They are
// merged into one session by causality, reading one line ahead on each
// side, so memory stays bounded:
//
//   - the client's next message goes first unless it cannot have been
//     sent yet: a response to a server request not yet seen, or
//     notifications/initialized before the initialize result;
//   - otherwise the server's next message goes, unless it cannot have been
//     sent yet either: a response to a client request not yet seen, or
//     progress for a token no open client request carries;
//   - when both are blocked the client's goes (the rules then say what is
//     wrong with it).
//
// Server notifications and requests therefore appear as late as the client
// allows, which never makes a valid exchange look invalid.

type pairHead struct {
	data    []byte
	line    int
	tooLong bool
	tree    any
	ok      bool // tree is JSON
}

type pairSide struct {
	lr   *lineReader
	name string
	head *pairHead
	done bool
}

type pairMerger struct {
	sides  [2]pairSide
	open   [2]map[wire.ID]bool // requests seen, by sender, not answered yet
	tokens map[wire.ID]int     // progress tokens of open client requests
	reqTok map[wire.ID]wire.ID // client request id -> its token
	initID wire.ID
	initOK bool // the initialize result was seen
}

func newPairMerger(c, s *lineReader, cname, sname string) *pairMerger {
	return &pairMerger{
		sides:  [2]pairSide{{lr: c, name: cname}, {lr: s, name: sname}},
		open:   [2]map[wire.ID]bool{{}, {}},
		tokens: map[wire.ID]int{},
		reqTok: map[wire.ID]wire.ID{},
	}
}

func (p *pairMerger) fill(s side) {
	sd := &p.sides[s]
	if sd.head != nil || sd.done {
		return
	}
	data, line, long, ok := sd.lr.next()
	if !ok {
		sd.done = true
		return
	}
	h := &pairHead{data: data, line: line, tooLong: long}
	if !long {
		if tree, err := parseJSON(data); err == nil {
			h.tree, h.ok = tree, true
		}
	}
	sd.head = h
}

// next returns the side and head of the next line in merged order. The
// head's bytes are valid until the next call.
func (p *pairMerger) next() (side, *pairHead, bool) {
	p.fill(fromClient)
	p.fill(fromServer)
	c, s := p.sides[fromClient].head, p.sides[fromServer].head
	var pick side
	switch {
	case c == nil && s == nil:
		return unknown, nil, false
	case c == nil:
		pick = fromServer
	case s == nil:
		pick = fromClient
	case !p.blocked(fromClient, c):
		pick = fromClient
	case !p.blocked(fromServer, s):
		pick = fromServer
	default:
		pick = fromClient
	}
	h := p.sides[pick].head
	p.sides[pick].head = nil
	p.emit(pick, h)
	return pick, h, true
}

// each calls fn for every message of a head (a batch has several).
func each(h *pairHead, fn func(map[string]any)) {
	if !h.ok {
		return
	}
	switch v := h.tree.(type) {
	case map[string]any:
		fn(v)
	case []any:
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				fn(m)
			}
		}
	}
}

func idOf(m map[string]any) (wire.ID, bool) {
	raw, ok := m["id"]
	if !ok || raw == nil {
		return wire.ID{}, false
	}
	id, err := wire.IDFromValue(raw)
	return id, err == nil
}

func isResponse(m map[string]any) bool {
	if _, call := m["method"]; call {
		return false
	}
	_, r := m["result"]
	_, e := m["error"]
	return r || e
}

func progressTokenOf(params any) (wire.ID, bool) {
	p, _ := params.(map[string]any)
	meta, _ := p["_meta"].(map[string]any)
	raw, ok := meta["progressToken"]
	if !ok {
		return wire.ID{}, false
	}
	id, err := wire.IDFromValue(raw)
	return id, err == nil
}

func (p *pairMerger) blocked(s side, h *pairHead) bool {
	blocked := false
	each(h, func(m map[string]any) {
		id, hasID := idOf(m)
		method, _ := m["method"].(string)
		switch {
		case isResponse(m):
			if hasID && !p.open[s.other()][id] {
				blocked = true
			}
		case s == fromClient && method == methodInitialized:
			if !p.initOK {
				blocked = true
			}
		case s == fromServer && method == methodProgress:
			params, _ := m["params"].(map[string]any)
			if tok, err := wire.IDFromValue(params["progressToken"]); err == nil && p.tokens[tok] == 0 {
				blocked = true
			}
		}
	})
	return blocked
}

func (p *pairMerger) emit(s side, h *pairHead) {
	each(h, func(m map[string]any) {
		id, hasID := idOf(m)
		method, isCall := m["method"].(string)
		switch {
		case isResponse(m):
			if !hasID {
				return
			}
			delete(p.open[s.other()], id)
			if s == fromServer {
				if tok, ok := p.reqTok[id]; ok {
					delete(p.reqTok, id)
					if p.tokens[tok]--; p.tokens[tok] <= 0 {
						delete(p.tokens, tok)
					}
				}
				if id == p.initID {
					p.initOK = true
				}
			}
		case isCall && hasID:
			p.open[s][id] = true
			if s == fromClient {
				if method == methodInitialize {
					p.initID = id
				}
				if tok, ok := progressTokenOf(m["params"]); ok {
					p.tokens[tok]++
					p.reqTok[id] = tok
				}
			}
		}
	})
}

// readPair merges a stdio pair into one input.
func (r *run) readPair(idx int, in Input, out chan<- *chunk) {
	crc, err := openLog(in)
	if err != nil {
		out <- &chunk{input: idx, end: true, ioErr: &InputError{Name: in.Name, Err: err}}
		return
	}
	defer crc.Close()
	src, err := openLog(*in.Server)
	if err != nil {
		out <- &chunk{input: idx, end: true, ioErr: &InputError{Name: in.Server.Name, Err: err}}
		return
	}
	defer src.Close()
	clr, slr := newLineReader(crc, r.cfg.maxLine), newLineReader(src, r.cfg.maxLine)
	m := newPairMerger(clr, slr, in.Name, in.Server.Name)
	c := newChunk(idx)
	for !r.stopped() {
		s, h, ok := m.next()
		if !ok {
			break
		}
		c.add(item{
			name: m.sides[s].name, line: h.line, tooLong: h.tooLong, format: FormatJSONL,
			dir: s, parsed: h.ok, tree: h.tree,
		}, h.data)
		if c.full() {
			c.seal()
			out <- c
			c = newChunk(idx)
		}
	}
	c.seal()
	c.end = true
	if err := clr.failure(); err != nil {
		c.ioErr = &InputError{Name: in.Name, Err: err}
	} else if err := slr.failure(); err != nil {
		c.ioErr = &InputError{Name: in.Server.Name, Err: err}
	}
	out <- c
}
