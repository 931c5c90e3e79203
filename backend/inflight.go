package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
)

// inflight tracks requests that have been read but not yet answered, so that the end of
// input waits for their replies: `printf '…' | pi-sbx-backend serve` gets every answer
// instead of a shutdown that drops the calls still running.
type inflight struct {
	mu      sync.Mutex
	pending map[string]bool // request ids, as raw JSON
	idle    chan struct{}   // closed while pending is empty
}

func newInflight() *inflight {
	idle := make(chan struct{})
	close(idle)
	return &inflight{pending: make(map[string]bool), idle: idle}
}

// request notes an inbound message: a request with an id becomes pending, and a
// notifications/cancelled releases the request it names (the SDK answers nothing then).
func (f *inflight) request(msg []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	switch {
	case len(m.ID) > 0 && string(m.ID) != "null":
		f.mu.Lock()
		if len(f.pending) == 0 {
			f.idle = make(chan struct{})
		}
		f.pending[string(compact(m.ID))] = true
		f.mu.Unlock()
	case m.Method == "notifications/cancelled":
		f.done(m.Params.RequestID)
	}
}

// response notes an outbound message; a response releases its request. Only the
// message's leading members are read: the SDK writes "jsonrpc", "id", then "method" for
// its own requests or "result"/"error" for responses.
func (f *inflight) response(msg []byte) {
	f.mu.Lock()
	empty := len(f.pending) == 0
	f.mu.Unlock()
	if empty {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	var id json.RawMessage
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return
		}
		switch key {
		case "method":
			return // a request of the server's own, not an answer
		case "id":
			if dec.Decode(&id) != nil {
				return
			}
		case "result", "error":
			f.done(id)
			return
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return
			}
		}
	}
}

func (f *inflight) done(id json.RawMessage) {
	if len(id) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := string(compact(id))
	if !f.pending[key] {
		return
	}
	delete(f.pending, key)
	if len(f.pending) == 0 {
		close(f.idle)
	}
}

// wait returns once no request is pending, or when ctx is done.
func (f *inflight) wait(ctx context.Context) {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
