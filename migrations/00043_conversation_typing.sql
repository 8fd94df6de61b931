-- +goose Up
-- Who is typing in a conversation (issue 36, "typing indicators both ways"):
-- the visitor in the widget's box, shown on the dashboard's conversation
-- page; a person in the dashboard's reply box, shown in the widget through
-- its stream. One row per conversation and party, upserted by each signal
-- (at most one write every 3 s: db.SignalTyping) with until = the signal's
-- time + 5 s; a row past its until is nobody typing. The table is UNLOGGED:
-- the state lives for seconds, is worth no WAL, and a crash that empties it
-- loses nothing a visitor would miss. A conversation's deletion (and so a
-- tenant's) takes its rows.
CREATE UNLOGGED TABLE conversation_typing (
    conversation_id uuid        NOT NULL,
    party           text        NOT NULL CHECK (party IN ('visitor', 'person')),
    tenant_id       uuid        NOT NULL,
    -- The person's name as the visitor sees it; NULL for the visitor.
    name            text        CHECK (char_length(name) BETWEEN 1 AND 100),
    until           timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, party),
    FOREIGN KEY (conversation_id, tenant_id) REFERENCES conversations (id, tenant_id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE conversation_typing;
