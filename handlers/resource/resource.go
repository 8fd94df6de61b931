// Package resource is the API's representation of the tenant's resources:
// the JSON a REST answer and an MCP tool's result share (segments, corpus
// entries, tools, visitors, conversations and their stats, the tenant's
// usage, the listings' pages, the answer to a deletion), and the decoders of their inputs into the root package's input
// types. REST and MCP both call it; neither calls the other.
package resource

import "strings"

// nonEmptyPtr is s trimmed, or nil when that is empty.
func nonEmptyPtr(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DeletionJSON is what a DELETE of one resource answers, REST or MCP:
// {deleted: true, id}, id as the request named it.
type DeletionJSON struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

// NewDeletionJSON is the answer to the deletion of id.
func NewDeletionJSON(id string) DeletionJSON { return DeletionJSON{Deleted: true, ID: id} }
