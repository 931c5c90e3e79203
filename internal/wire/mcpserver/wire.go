package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
)

// This file is the JSON-RPC encoding of a line (framing.go): one validating pass over a
// line finds the envelope's members as sub-slices of it (a 30 MB write's arguments are
// neither copied nor decoded here), and messages are encoded without re-validating the
// JSON the SDK itself produced.

// envelope is one message's top-level members, raw; nil when absent.
type envelope struct {
	version, id, method, params, result, errObj []byte
}

// set notes a member of the envelope; a repeated member keeps the last value, as
// encoding/json does, and other members are ignored.
func (env *envelope) set(key, val []byte) {
	switch string(key) {
	case "jsonrpc":
		env.version = val
	case "id":
		env.id = val
	case "method":
		env.method = val
	case "params":
		env.params = val
	case "result":
		env.result = val
	case "error":
		env.errObj = val
	}
}

// parseEnvelope validates line as one JSON object and returns its members. A syntax
// error wraps jsonwire.ErrSyntax; a valid value that is not an object is
// jsonwire.ErrNotObject.
func parseEnvelope(line []byte) (envelope, error) {
	var env envelope
	err := jsonwire.ValidMembers(line, env.set)
	return env, err
}

// Envelope holds the members of one JSON-RPC message as the raw JSON they were
// sent as (nil when absent), for a peer that answers without decoding: the agent
// channel's client.
type Envelope struct {
	Version, ID, Method, Params, Result, Error []byte
}

// ParseEnvelope validates line as one JSON object and returns its JSON-RPC members.
func ParseEnvelope(line []byte) (Envelope, error) {
	env, err := parseEnvelope(line)
	return Envelope{env.version, env.id, env.method, env.params, env.result, env.errObj}, err
}

// walkEnvelope finds the members of a line that its writer has validated, without
// checking them again; ok is false if the line does not walk as one object.
func walkEnvelope(line []byte) (env envelope, ok bool) {
	ok = jsonwire.Members(line, env.set)
	return env, ok
}

// idError says why a request id cannot be carried through the SDK exactly.
type idError struct{ reason string }

func (e *idError) Error() string { return e.reason }

// maxExactID is the largest integer magnitude the SDK's ids (decoded as float64, then
// kept as int64) carry without rounding.
const maxExactID = 1 << 53

// parseID turns a raw, validated id into the SDK's typed id. It refuses every id the SDK
// would answer with a different value: numbers not written as plain integers (3.0, 2e0,
// -0), fractions, integers beyond ±2^53, and strings whose escapes do not survive
// decoding (lone surrogates, invalid UTF-8). Objects, arrays and booleans are not ids.
func parseID(raw []byte) (jsonrpc.ID, error) {
	switch c := raw[0]; {
	case c == 'n':
		return jsonrpc.ID{}, nil
	case c == '"':
		s, ok := jsonwire.ExactString(raw)
		if !ok {
			return jsonrpc.ID{}, &idError{"its escapes or bytes are not valid Unicode (a lone surrogate or invalid UTF-8), so it would come back changed"}
		}
		return jsonrpc.MakeID(s)
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || string(raw) == "-0" {
			return jsonrpc.ID{}, &idError{"it is not written as a plain integer (no fraction, exponent or -0) in the int64 range"}
		}
		if n > maxExactID || n < -maxExactID {
			return jsonrpc.ID{}, &idError{"its magnitude exceeds 2^53, beyond which ids are rounded"}
		}
		return jsonrpc.MakeID(float64(n))
	default:
		return jsonrpc.ID{}, &idError{"an id must be a string, a number or null"}
	}
}

// toMessage builds the SDK's message from a validated envelope.
func toMessage(env envelope) (jsonrpc.Message, error) {
	if v, ok := jsonwire.Unquote(env.version); !ok || v != "2.0" {
		return nil, fmt.Errorf(`"jsonrpc" must be "2.0"`)
	}
	var id jsonrpc.ID
	if env.id != nil {
		var err error
		if id, err = parseID(env.id); err != nil {
			return nil, err
		}
	}
	if env.method != nil {
		m, ok := jsonwire.Unquote(env.method)
		if !ok {
			return nil, fmt.Errorf(`"method" must be a string`)
		}
		req := &jsonrpc.Request{ID: id, Method: m}
		if env.params != nil && string(env.params) != "null" {
			req.Params = json.RawMessage(env.params)
		}
		return req, nil
	}
	if !id.IsValid() {
		return nil, fmt.Errorf(`neither a request ("method") nor a response (an "id")`)
	}
	resp := &jsonrpc.Response{ID: id}
	switch {
	case env.errObj != nil && string(env.errObj) != "null":
		var we jsonrpc.Error
		if err := json.Unmarshal(env.errObj, &we); err != nil {
			return nil, fmt.Errorf(`"error" must be an error object: %w`, err)
		}
		resp.Error = &we
	case env.result != nil:
		resp.Result = json.RawMessage(env.result)
	default:
		return nil, fmt.Errorf(`a response needs "result" or "error"`)
	}
	return resp, nil
}

// appendID appends an SDK id as JSON.
func appendID(dst []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case string:
		return jsonwire.AppendString(dst, v)
	default:
		return append(dst, "null"...)
	}
}

// encodeMessage appends msg as one line. Params and results are the SDK's own
// json.Marshal output, so they are copied as they are instead of being re-validated.
func encodeMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			dst = append(dst, `,"id":`...)
			dst = appendID(dst, m.ID)
		}
		dst = append(dst, `,"method":`...)
		dst = jsonwire.AppendString(dst, m.Method)
		if len(m.Params) > 0 {
			dst = append(dst, `,"params":`...)
			dst = append(dst, m.Params...)
		}
	case *jsonrpc.Response:
		dst = append(dst, `,"id":`...)
		dst = appendID(dst, m.ID)
		if m.Error != nil {
			we := wireError(m.Error)
			dst = append(dst, `,"error":{"code":`...)
			dst = strconv.AppendInt(dst, we.Code, 10)
			dst = append(dst, `,"message":`...)
			dst = jsonwire.AppendString(dst, we.Message)
			if len(we.Data) > 0 {
				dst = append(dst, `,"data":`...)
				dst = append(dst, we.Data...)
			}
			dst = append(dst, '}')
		} else {
			dst = append(dst, `,"result":`...)
			if len(m.Result) == 0 {
				dst = append(dst, "null"...)
			} else {
				dst = append(dst, m.Result...)
			}
		}
	default:
		return nil, fmt.Errorf("unknown JSON-RPC message type %T", msg)
	}
	return append(dst, '}', '\n'), nil
}

// wireError is the SDK's mapping of a handler error onto the wire: a *jsonrpc.Error as
// it is, otherwise the message of err with the code of a wrapped *jsonrpc.Error.
func wireError(err error) *jsonrpc.Error {
	if we, ok := err.(*jsonrpc.Error); ok {
		return we
	}
	out := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		out.Code = wrapped.Code
	}
	return out
}

// rawErrorReply is a JSON-RPC error answering a request the SDK never sees; id is the
// raw id to echo (nil: null).
func rawErrorReply(id []byte, code int64, message string) []byte {
	dst := []byte(`{"jsonrpc":"2.0","id":`)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, code, 10)
	dst = append(dst, `,"message":`...)
	dst = jsonwire.AppendString(dst, message)
	return append(dst, '}', '}', '\n')
}
