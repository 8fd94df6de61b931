-- +goose Up
CREATE TABLE conversations (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id           uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    segment_id          uuid REFERENCES segments(id) ON DELETE SET NULL,
    visitor_id          uuid REFERENCES visitors(id) ON DELETE CASCADE,
    session_id          text NOT NULL CHECK (char_length(session_id) BETWEEN 1 AND 100),
    channel             text NOT NULL DEFAULT 'web' CHECK (channel IN ('web', 'agent', 'voice', 'api')),
    status              text NOT NULL DEFAULT 'BOT' CHECK (status IN ('BOT', 'ESCALATED')),
    visitor_type        text NOT NULL DEFAULT 'human' CHECK (visitor_type IN ('human', 'agent')),
    agent_model         text,
    page_url            text,
    metadata            jsonb NOT NULL DEFAULT '{}',  -- {userAgent, referrer, page}
    first_user_message  text,
    locale              text,
    message_count       integer NOT NULL DEFAULT 0,
    tool_calls_count    integer NOT NULL DEFAULT 0,
    feedback_positive   integer NOT NULL DEFAULT 0,
    feedback_negative   integer NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    last_message_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT conversations_session UNIQUE (tenant_id, session_id)
);
-- Lists, exports and the monthly quota count scan by tenant and creation time.
CREATE INDEX conversations_tenant_created ON conversations (tenant_id, created_at DESC);
-- visitor_id alone: it serves both the visitor filter (a visitor belongs to one
-- tenant) and the cascade when a visitor is deleted.
CREATE INDEX conversations_visitor ON conversations (visitor_id) WHERE visitor_id IS NOT NULL;
CREATE INDEX conversations_segment ON conversations (segment_id) WHERE segment_id IS NOT NULL;

-- seq orders a conversation's rows exactly: several rows can share a timestamp.
CREATE TABLE messages (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq                 bigint GENERATED ALWAYS AS IDENTITY,
    tenant_id           uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    conversation_id     uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role                text NOT NULL CHECK (role IN ('user', 'assistant')),
    content             text NOT NULL,
    feedback            smallint CHECK (feedback IN (-1, 1)),
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX messages_conversation ON messages (conversation_id, seq);

CREATE TABLE tool_history (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq                 bigint GENERATED ALWAYS AS IDENTITY,
    tenant_id           uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    conversation_id     uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    tool_name           text NOT NULL CHECK (tool_name = lower(tool_name)),
    tool_type           text NOT NULL,
    input               jsonb NOT NULL DEFAULT '{}',
    result              jsonb,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX tool_history_conversation ON tool_history (conversation_id, seq);

-- Deleting a tool, conversation or visitor never breaks a stored submission:
-- its link becomes null.
CREATE TABLE submissions (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id           uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    tool_id             uuid REFERENCES tools(id) ON DELETE SET NULL,
    tool_type           text NOT NULL,
    tool_name           text NOT NULL,
    conversation_id     uuid REFERENCES conversations(id) ON DELETE SET NULL,
    visitor_id          uuid REFERENCES visitors(id) ON DELETE SET NULL,
    channel             text NOT NULL CHECK (channel IN ('web', 'voice', 'api', 'form')),
    status              text NOT NULL DEFAULT 'NEW' CHECK (status IN ('NEW', 'CONTACTED', 'RESOLVED')),
    input               jsonb NOT NULL DEFAULT '{}',
    result              jsonb NOT NULL DEFAULT '{}',
    page_url            text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX submissions_tenant_created ON submissions (tenant_id, created_at DESC);
CREATE INDEX submissions_tenant_status ON submissions (tenant_id, status);
CREATE INDEX submissions_tenant_tool_type ON submissions (tenant_id, tool_type);
CREATE INDEX submissions_tool ON submissions (tool_id) WHERE tool_id IS NOT NULL;
CREATE INDEX submissions_conversation ON submissions (conversation_id) WHERE conversation_id IS NOT NULL;
CREATE INDEX submissions_visitor ON submissions (visitor_id) WHERE visitor_id IS NOT NULL;

-- events is the outbox of webhook events: a row is written in the transaction
-- that changes the submission, with the payload frozen as the spec's webhook
-- body {event, createdAt, data{...}}. For submission.updated, data also holds
-- status (the new one) and previousStatus. The webhooks issue delivers them.
CREATE TABLE events (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id           uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    type                text NOT NULL CHECK (type IN ('submission.created', 'submission.updated')),
    submission_id       uuid REFERENCES submissions(id) ON DELETE SET NULL,
    payload             jsonb NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_tenant_created ON events (tenant_id, created_at);
CREATE INDEX events_submission ON events (submission_id) WHERE submission_id IS NOT NULL;

-- +goose Down
DROP TABLE events, submissions, tool_history, messages, conversations;
