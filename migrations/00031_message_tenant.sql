-- +goose Up
-- A message's tenant is its conversation's, and the database says so: one
-- foreign key on both columns, (conversation_id, tenant_id) to the
-- conversation's (id, tenant_id), instead of one on each. The tenant's key
-- only said that some tenant of that id existed; the pair says it is the
-- conversation's own, so a message filed under another tenant than its
-- conversation's cannot be stored, whatever the statement that writes it.
-- It is one referential check per message where there were two (each a
-- query that locks the referenced row for key share; the tenant's row was
-- locked by every message of every conversation the tenant has), at the
-- price of one unique index on conversations, written once a conversation.
-- A tenant's deletion still removes its messages, through its
-- conversations.
ALTER TABLE conversations ADD CONSTRAINT conversations_id_tenant UNIQUE (id, tenant_id);
ALTER TABLE messages
    DROP CONSTRAINT messages_conversation_id_fkey,
    DROP CONSTRAINT messages_tenant_id_fkey,
    ADD CONSTRAINT messages_conversation_fkey FOREIGN KEY (conversation_id, tenant_id)
        REFERENCES conversations (id, tenant_id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE messages
    DROP CONSTRAINT messages_conversation_fkey,
    ADD CONSTRAINT messages_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES conversations (id) ON DELETE CASCADE,
    ADD CONSTRAINT messages_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON DELETE CASCADE;
ALTER TABLE conversations DROP CONSTRAINT conversations_id_tenant;
