-- +goose Up
-- A segment's lead capture, as the dashboard sets it up: the fields of its
-- form (form_config) shown in the widget, and a SUBMIT_FORM tool of the
-- segment, kept in step with them, through which the assistant asks for
-- the same details in the conversation. lead_tool_id names that tool; it
-- goes with the segment.
ALTER TABLE segments ADD COLUMN lead_tool_id uuid REFERENCES tools(id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE segments DROP COLUMN lead_tool_id;
