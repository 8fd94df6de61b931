package pgbase

import "strings"

// Qualified prefixes each column of a column list with the table alias a.
func Qualified(a, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = a + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// ConversationColumns are the columns of a parley.Conversation.
const ConversationColumns = `id, tenant_id, segment_id, visitor_id, session_id, channel, status, visitor_type,
	agent_model, page_url, metadata, first_user_message, locale, message_count, tool_calls_count,
	feedback_positive, feedback_negative, created_at, updated_at, last_message_at, is_test,
	escalated_at, taken_at, assigned_user_id, assignee`

// MessageColumns are the columns of a parley.Message.
const MessageColumns = `id, conversation_id, role, content, feedback, created_at, knowledge, author_name`

// SubmissionColumns are the columns of a parley.Submission.
const SubmissionColumns = `id, tenant_id, tool_id, tool_type, tool_name, conversation_id, visitor_id, channel,
	status, input, result, page_url, created_at, updated_at`
