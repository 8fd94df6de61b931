-- +goose Up
-- What the analytics' resolution rate reads of a conversation without
-- opening its messages (issue 40):
--   answered           the assistant answered in it at least once
--   person_replied     a person of the team replied in it (a message of role
--                      'human'), even once it went back to the assistant
--   repeated_question  the visitor asked the same or nearly the same question
--                      again: a message of theirs whose question key
--                      (question_key: first line, lower-cased, runs of spaces
--                      and punctuation as one space, at most 100 characters)
--                      has at least three words and 15 characters, and equals
--                      or is trigram-similar (pg_trgm similarity >= 0.8) to
--                      the key of one of their 50 messages before it
-- Both are set by a trigger on messages, so that every path that stores a
-- message (chat, API, takeover, seeding) keeps them, and never cleared.
ALTER TABLE conversations
    ADD COLUMN answered          boolean NOT NULL DEFAULT false,
    ADD COLUMN person_replied    boolean NOT NULL DEFAULT false,
    ADD COLUMN repeated_question boolean NOT NULL DEFAULT false;

-- +goose StatementBegin
CREATE FUNCTION question_key(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT left(btrim(regexp_replace(lower(split_part(btrim(t, E' \t\r\n'), E'\n', 1)), '[[:space:][:punct:]]+', ' ', 'g')), 100)
$$;
-- +goose StatementEnd

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

-- The conversations stored before it.
UPDATE conversations c SET answered = true
    WHERE EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'assistant');
UPDATE conversations c SET person_replied = true
    WHERE EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.role = 'human');
UPDATE conversations c SET repeated_question = true
    WHERE EXISTS (SELECT 1 FROM messages a JOIN messages b ON b.conversation_id = a.conversation_id AND b.seq < a.seq
        WHERE a.conversation_id = c.id AND a.role = 'user' AND b.role = 'user'
            AND char_length(question_key(a.content)) >= 15 AND question_key(a.content) LIKE '% % %'
            AND (question_key(b.content) = question_key(a.content) OR similarity(question_key(b.content), question_key(a.content)) >= 0.8));

-- +goose Down
DROP TRIGGER messages_resolution ON messages;
DROP FUNCTION messages_resolution();
DROP FUNCTION question_key(text);
ALTER TABLE conversations DROP COLUMN answered, DROP COLUMN person_replied, DROP COLUMN repeated_question;
