-- +goose Up
-- The tool history named a run of the tenant's own tool by the tool's name
-- lower-cased ("check order status"), where the spec names runs by the
-- lowercase function name the model called ("check_order_status"). The
-- name the owner gave the tool, which the dashboard shows, moves to a
-- column of its own, kept as it was at the run: a later rename of the tool
-- leaves the history alone. New runs store both (agent.Execution.Function
-- and DisplayName); the runs stored before are rewritten below. The
-- built-in tools have no display name (null).
ALTER TABLE tool_history ADD COLUMN tool_display_name text;

-- Only the tenant's own tool types: the built-in tools and the MCP
-- server's were stored under their function name already. The function
-- name is derived from the stored name as agent.functionName derives it
-- from the tool's name, which the stored name is the lowercase of: each
-- run of characters other than a-z and 0-9 one _, trimmed of _; the type
-- lower-cased when nothing is left; tool_ before a name that does not
-- start with a letter; at most 56 characters. The _2, _3 suffix a name
-- clash within one turn got cannot be derived and is not. The display name
-- is the name of the tenant's tool of that name (unique per tenant, case
-- aside) and type when it still exists, else the stored name itself, in
-- the lower case it was stored in.
UPDATE tool_history th
SET tool_name = fn.name, tool_display_name = coalesce(t.name, h.tool_name)
FROM tool_history h
CROSS JOIN LATERAL (SELECT btrim(regexp_replace(h.tool_name, '[^a-z0-9]+', '_', 'g'), '_') AS s) AS base
CROSS JOIN LATERAL (SELECT CASE WHEN base.s = '' THEN lower(h.tool_type) ELSE base.s END AS s) AS typed
CROSS JOIN LATERAL (SELECT rtrim(left(CASE WHEN typed.s ~ '^[a-z]' THEN typed.s ELSE 'tool_' || typed.s END, 56), '_') AS name) AS fn
LEFT JOIN tools t ON t.tenant_id = h.tenant_id AND lower(t.name) = h.tool_name AND t.type = h.tool_type
WHERE th.id = h.id
    AND h.tool_type IN ('SUBMIT_FORM', 'GENERATE_QUOTE', 'BOOK_MEETING', 'ESCALATE_TO_HUMAN', 'REMEMBER_FACT', 'RECOMMEND_PRODUCT');

-- +goose Down
-- The runs of the tenant's own tools are named by their display name
-- lower-cased again.
UPDATE tool_history SET tool_name = lower(tool_display_name)
WHERE tool_display_name IS NOT NULL
    AND tool_type IN ('SUBMIT_FORM', 'GENERATE_QUOTE', 'BOOK_MEETING', 'ESCALATE_TO_HUMAN', 'REMEMBER_FACT', 'RECOMMEND_PRODUCT');
ALTER TABLE tool_history DROP COLUMN tool_display_name;
