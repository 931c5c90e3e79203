// Package jsonwire is the one JSON line scanner of the MCP wire: it reads protocol lines
// (long ones straight into pieces of their own), validates a line once on arrival, walks
// the validated text without checking it again, quotes and unescapes strings fast, and
// sets the long strings of a tool call's arguments aside as stand-ins so that every
// decoder that does not need them sees a few hundred bytes. It knows JSON, not MCP.
package jsonwire
