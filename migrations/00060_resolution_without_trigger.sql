-- +goose Up
-- The resolution's marks of migration 00058 (answered, person_replied,
-- repeated_question) are kept by the statements that store messages, in
-- the update of the conversation's row they make anyway, rather than by a
-- trigger on messages: the trigger cost every message a plpgsql call and,
-- for a visitor's message, the question key and a look at the messages
-- before it even when there were none (a conversation's first message),
-- and for an answer a second update of the conversation's row
-- (BENCHMARKS.md, issue 41). question_repeated is the trigger's test of a
-- visitor's message, for those statements to call: whether content's
-- question key has at least three words and 15 characters and equals or is
-- trigram-similar (similarity >= 0.8) to the key of one of the visitor's
-- 50 latest messages in conversation conv (of those before seq before,
-- when given). Called in the statement that stores the message, before the
-- message is visible to it, so those are the messages before it, as the
-- trigger's were; seeding, which marks conversations already copied, names
-- each message's seq instead.

-- +goose StatementBegin
CREATE FUNCTION question_repeated(conv uuid, content text, before bigint DEFAULT NULL) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT char_length(q.k) >= 15 AND q.k LIKE '% % %' AND EXISTS (
        SELECT 1 FROM (SELECT question_key(m.content) AS key FROM messages m
            WHERE m.conversation_id = conv AND m.role = 'user' AND (before IS NULL OR m.seq < before)
            ORDER BY m.seq DESC LIMIT 50) e
        WHERE e.key = q.k OR similarity(e.key, q.k) >= 0.8)
    FROM (SELECT question_key(content) AS k) q
$$;
-- +goose StatementEnd

DROP TRIGGER messages_resolution ON messages;
DROP FUNCTION messages_resolution();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION messages_resolution() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k text;
BEGIN
    IF NEW.role = 'assistant' THEN
        UPDATE conversations SET answered = true WHERE id = NEW.conversation_id AND NOT answered;
    ELSIF NEW.role = 'human' THEN
        UPDATE conversations SET person_replied = true WHERE id = NEW.conversation_id AND NOT person_replied;
    ELSE
        k := question_key(NEW.content);
        IF char_length(k) >= 15 AND k LIKE '% % %' AND EXISTS (
            SELECT 1 FROM (SELECT question_key(m.content) AS key FROM messages m
                WHERE m.conversation_id = NEW.conversation_id AND m.role = 'user' AND m.seq < NEW.seq
                ORDER BY m.seq DESC LIMIT 50) e
            WHERE e.key = k OR similarity(e.key, k) >= 0.8) THEN
            UPDATE conversations SET repeated_question = true WHERE id = NEW.conversation_id AND NOT repeated_question;
        END IF;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER messages_resolution AFTER INSERT ON messages
    FOR EACH ROW WHEN (NEW.role IN ('user', 'assistant', 'human')) EXECUTE FUNCTION messages_resolution();

DROP FUNCTION question_repeated(uuid, text, bigint);
