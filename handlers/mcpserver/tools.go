package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// ManageTool is one management tool: what Parley's MCP server offers at
// /mcp, independent of the transport, so that another caller (a chat turn
// with an admin token) can run the same code. Each decodes its arguments
// into the management operation's input and runs the operation the REST
// API runs, so rules and limits are the same.
type ManageTool struct {
	Name        string
	Description string
	// Scope is the mcp:* scope a caller needs to run it.
	Scope string
	// Input is the JSON Schema of its arguments: an object whose properties
	// are the only arguments accepted.
	Input map[string]any
	// ReadOnly: it changes nothing; Destructive: it removes data.
	ReadOnly, Destructive bool
	// Run does the work for the tenant; args holds only declared properties.
	// Its result is a JSON object; an error of ours is the caller's to fix.
	Run func(ctx context.Context, t parley.Tenant, p auth.Principal, args map[string]json.RawMessage) (any, error)
}

// schema is a JSON Schema, as a map so that it marshals as it is written.
type schema = map[string]any

func object(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string, maxLen int) schema {
	s := schema{"type": "string", "description": desc}
	if maxLen > 0 {
		s["maxLength"] = maxLen
	}
	return s
}

// nullable is s accepting null too (which clears the field).
func nullable(s schema) schema {
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	out["type"] = []string{s["type"].(string), "null"}
	return out
}

func integer(desc string, minimum, maximum int) schema {
	return schema{"type": "integer", "description": desc, "minimum": minimum, "maximum": maximum}
}

func boolean(desc string) schema { return schema{"type": "boolean", "description": desc} }

func enum(desc string, values []string) schema {
	return schema{"type": "string", "description": desc, "enum": values}
}

func idArg(what string) schema { return str("The "+what+"'s id", 0) }

// Schemas of the write tools' fields, with the REST API's limits.
func corpusProps(withID bool) schema {
	p := schema{
		"title":       str("Title", parley.MaxCorpusTitle),
		"content":     str("The text the assistant answers from (Markdown)", parley.MaxCorpusContent),
		"summary":     nullable(str("A short summary, shown to the assistant when the whole entry does not fit its prompt", parley.MaxCorpusSummary)),
		"priority":    integer("Higher first when the prompt is full", parley.MinCorpusPriority, parley.MaxCorpusPriority),
		"isActive":    boolean("Whether the assistant uses it"),
		"externalId":  nullable(str("Your own id: creating with one already used updates that entry instead", parley.MaxCorpusExternalID)),
		"source":      nullable(str("Where it comes from (free text)", parley.MaxCorpusSource)),
		"sourceUrl":   nullable(str("An http(s) URL it comes from", parley.MaxCorpusSourceURL)),
		"locale":      nullable(str("Language code such as en, fr or fr-CA", parley.MaxCorpusLocale)),
		"tags":        schema{"type": []string{"array", "null"}, "items": schema{"type": "string", "maxLength": parley.MaxTag}, "maxItems": parley.MaxTags},
		"segmentSlug": nullable(str("Slug of the segment it belongs to; null for every segment", parley.MaxSegmentSlug)),
	}
	if withID {
		p["id"] = idArg("corpus entry")
	}
	return p
}

func segmentProps(withID bool) schema {
	formField := object(schema{
		"name": str("Field name", 0), "label": str("Label shown", 0),
		"type":     enum("Field type", parley.FormFieldTypes),
		"required": boolean("Whether it must be filled"),
	}, "name", "label", "type")
	p := schema{
		"slug":           str("Lowercase letters, digits and hyphens; generated from the name when omitted", parley.MaxSegmentSlug),
		"name":           str("Name", parley.MaxSegmentName),
		"systemPrompt":   str("Instructions the assistant follows in this segment", parley.MaxSystemPrompt),
		"welcomeMessage": nullable(str("The widget's first message", parley.MaxWelcomeMessage)),
		"conversationStarters": schema{"type": []string{"array", "null"}, "maxItems": parley.MaxStarters, "items": object(schema{
			"text": str("Suggested first question", parley.MaxStarterText), "emoji": str("Optional emoji", parley.MaxStarterEmoji)}, "text")},
		"formConfig": schema{"type": []string{"object", "null"}, "description": "The widget's lead form", "properties": schema{
			"enabled": boolean("Whether the widget shows it"), "intent": str("What it is for", parley.MaxFormIntent),
			"confirmationMessage": str("Shown once sent", parley.MaxFormConfirmation),
			"fields":              schema{"type": "array", "items": formField},
			"display": enum("When the widget shows it: on_open (as the chat opens), after_first_answer (the default), "+
				"when_asked (only when the assistant offers it)", parley.FormDisplays),
		}},
		"isDefault": boolean("Whether it is the tenant's default segment"),
		"isActive":  boolean("Whether it answers"),
	}
	if withID {
		p["id"] = str("The segment's id or slug", 0)
	}
	return p
}

func toolProps(withID bool) schema {
	p := schema{
		"name":          str("Name the assistant sees", parley.MaxToolName),
		"description":   str("When the assistant should use it", parley.MaxToolDescription),
		"type":          enum("Tool type", parley.UserToolTypes),
		"config":        schema{"type": "object", "description": "Settings of the type (see the REST API's tool configs)"},
		"segmentId":     nullable(str("Id or slug of the segment it is offered in; null for every segment", 0)),
		"isActive":      boolean("Whether it is offered"),
		"position":      schema{"type": "number", "description": "Order among the tools, lowest first", "minimum": -1e9, "maximum": 1e9},
		"webhookUrl":    nullable(str("ESCALATE_TO_HUMAN only: https URL called on a handover", parley.MaxURL)),
		"webhookSecret": nullable(str("ESCALATE_TO_HUMAN only: secret signing the webhook (write only)", parley.MaxToolWebhookSecret)),
	}
	if withID {
		p["id"] = idArg("tool")
	}
	return p
}

// personaJSON is the persona as read_persona shows it: the tenant fields of
// the dashboard's Persona page (update_persona's arguments).
type personaJSON struct {
	Name          string  `json:"name"`
	BotName       *string `json:"botName"`
	BotTitle      *string `json:"botTitle"`
	BotLore       *string `json:"botLore"`
	BotTone       string  `json:"botTone"`
	ContentPolicy string  `json:"contentPolicy"`
	UseTutoiement bool    `json:"useTutoiement"`
	AllowEmojis   bool    `json:"allowEmojis"`
}

func newPersonaJSON(t parley.Tenant) personaJSON {
	return personaJSON{Name: t.Name, BotName: t.BotName, BotTitle: t.BotTitle, BotLore: t.BotLore, BotTone: t.BotTone,
		ContentPolicy: t.ContentPolicy, UseTutoiement: t.UseTutoiement, AllowEmojis: t.AllowEmojis}
}

// ManageTools lists the management tools (tools/list sorts them by name).
func (h *Handler) ManageTools() []ManageTool {
	pagination := schema{
		"page":  integer("Page number, from 1", 1, parley.MaxPage),
		"limit": integer("Entries per page", 1, manage.MaxCorpusPage),
	}
	corpusList := schema{"segmentSlug": str("Only the entries of this segment (slug)", parley.MaxSegmentSlug)}
	for k, v := range pagination {
		corpusList[k] = v
	}
	corpusSearch := schema{"search": str("Words to find in titles and contents", manage.MaxCorpusSearch)}
	for k, v := range corpusList {
		corpusSearch[k] = v
	}
	conversationScopeProps := schema{
		"from":    str("Start: RFC 3339 date-time, or YYYY-MM-DD", 0),
		"to":      str("End (exclusive): RFC 3339 date-time, or YYYY-MM-DD (that whole day included)", 0),
		"channel": enum("Channel", parley.ConversationChannels),
		"segment": str("Slug or id of a segment", 0),
	}
	conversationList := schema{
		"page":      integer("Page number, from 1", 1, parley.MaxPage),
		"limit":     integer("Conversations per page", 1, parley.MaxConversationsPage),
		"status":    enum("Status", parley.ConversationStatuses),
		"visitorId": str("Only this visitor's conversations (uuid)", 0),
		"toolType":  enum("Only conversations that ran a tool of this type", append(slices.Clone(parley.UserToolTypes), parley.SyntheticToolTypes...)),
		"search":    str("Words to find in the messages", parley.MaxConversationSearch),
	}
	statsProps := schema{
		"granularity": enum("Timeline buckets", parley.StatsGranularities),
		"window":      enum("all: add all-time totals", []string{"all"}),
	}
	for k, v := range conversationScopeProps {
		conversationList[k] = v
		statsProps[k] = v
	}

	return h.audited(append([]ManageTool{
		{Name: "list_corpus_entries", Scope: auth.ScopeMCPCorpusRead, ReadOnly: true,
			Description: "List the knowledge base's entries, highest priority then most recently updated first, optionally of one segment.",
			Input:       object(corpusList),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				l := manage.NewCorpusListing()
				if err := listingArgs(args, &l); err != nil {
					return nil, err
				}
				res, err := h.Manage.ListCorpus(ctx, t.ID, l)
				if err != nil {
					return nil, err
				}
				return resource.NewCorpusListJSON(l, res), nil
			}},
		{Name: "search_corpus", Scope: auth.ScopeMCPCorpusRead, ReadOnly: true,
			Description: "Search the knowledge base's entries for words in their titles and contents.",
			Input:       object(corpusSearch, "search"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				l := manage.NewCorpusListing()
				if err := listingArgs(args, &l); err != nil {
					return nil, err
				}
				if strings.TrimSpace(l.Search) == "" {
					return nil, resource.FieldError("search", "is required")
				}
				res, err := h.Manage.ListCorpus(ctx, t.ID, l)
				if err != nil {
					return nil, err
				}
				return resource.NewCorpusListJSON(l, res), nil
			}},
		{Name: "read_corpus_entry", Scope: auth.ScopeMCPCorpusRead, ReadOnly: true,
			Description: "Read one knowledge base entry with its whole content.",
			Input:       object(schema{"id": idArg("corpus entry")}, "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				e, err := h.Manage.CorpusEntry(ctx, t.ID, id)
				if err != nil {
					return nil, err
				}
				return resource.CorpusEnvelopeJSON{Corpus: resource.NewCorpusJSON(e)}, nil
			}},
		{Name: "create_corpus_entry", Scope: auth.ScopeMCPCorpusWrite,
			Description: "Add an entry to the knowledge base (with externalId: update the entry that has it). Within the plan's corpus limit.",
			Input:       object(corpusProps(false), "title", "content"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				e, created, err := h.Manage.CreateCorpus(ctx, t, resource.CorpusInputOf(args))
				if err != nil {
					return nil, err
				}
				return resource.CorpusUpsertJSON{Corpus: resource.NewCorpusJSON(e), Created: created}, nil
			}},
		{Name: "update_corpus_entry", Scope: auth.ScopeMCPCorpusWrite,
			Description: "Change a knowledge base entry: only the fields given change.",
			Input:       object(corpusProps(true), "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				e, err := h.Manage.UpdateCorpus(ctx, t.ID, id, resource.CorpusInputOf(args))
				if err != nil {
					return nil, err
				}
				return resource.CorpusEnvelopeJSON{Corpus: resource.NewCorpusJSON(e)}, nil
			}},
		{Name: "delete_corpus_entry", Scope: auth.ScopeMCPCorpusWrite, Destructive: true,
			Description: "Delete a knowledge base entry for good.",
			Input:       object(schema{"id": idArg("corpus entry")}, "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				if err := h.Manage.DeleteCorpus(ctx, t.ID, id); err != nil {
					return nil, err
				}
				return resource.NewDeletionJSON(id), nil
			}},

		{Name: "list_segments", Scope: auth.ScopeMCPSegmentsRead, ReadOnly: true,
			Description: "List the segments (audiences with their own prompt, starters and form), without their system prompts.",
			Input:       object(schema{}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, _ map[string]json.RawMessage) (any, error) {
				segs, err := resource.SegmentSummaries(ctx, h.DB, t.ID)
				if err != nil {
					return nil, err
				}
				return map[string]any{"segments": segs}, nil
			}},
		{Name: "read_segment", Scope: auth.ScopeMCPSegmentsRead, ReadOnly: true,
			Description: "Read one segment with its system prompt.",
			Input:       object(schema{"id": str("The segment's id or slug", 0)}, "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				s, err := h.Manage.Segment(ctx, t.ID, id)
				if err != nil {
					return nil, err
				}
				return map[string]any{"segment": s}, nil
			}},
		{Name: "create_segment", Scope: auth.ScopeMCPSegmentsWrite,
			Description: "Create a segment, within the plan's segment limit.",
			Input:       object(segmentProps(false), "name", "systemPrompt"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				s, err := h.Manage.CreateSegment(ctx, t, resource.SegmentInputOf(args))
				if err != nil {
					return nil, err
				}
				return map[string]any{"segment": s}, nil
			}},
		{Name: "update_segment", Scope: auth.ScopeMCPSegmentsWrite,
			Description: "Change a segment: only the fields given change.",
			Input:       object(segmentProps(true), "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				s, err := h.Manage.UpdateSegment(ctx, t.ID, id, resource.SegmentInputOf(args))
				if err != nil {
					return nil, err
				}
				return map[string]any{"segment": s}, nil
			}},

		{Name: "list_tools", Scope: auth.ScopeMCPToolsRead, ReadOnly: true,
			Description: "List the tools the assistant may run (forms, quotes, meetings, handover, memory, products), lowest position first.",
			Input:       object(schema{}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, _ map[string]json.RawMessage) (any, error) {
				tools, err := h.Manage.ListTools(ctx, t.ID)
				if err != nil {
					return nil, err
				}
				out := make([]resource.ToolJSON, len(tools))
				for i, tool := range tools {
					out[i] = resource.NewToolJSON(tool)
				}
				return map[string]any{"tools": out}, nil
			}},
		{Name: "read_tool", Scope: auth.ScopeMCPToolsRead, ReadOnly: true,
			Description: "Read one tool with its configuration.",
			Input:       object(schema{"id": idArg("tool")}, "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				tool, err := h.Manage.Tool(ctx, t.ID, id)
				if err != nil {
					return nil, err
				}
				return map[string]any{"tool": resource.NewToolJSON(tool)}, nil
			}},
		{Name: "create_tool", Scope: auth.ScopeMCPToolsWrite,
			Description: "Create a tool of one of the configurable types: " + strings.Join(parley.UserToolTypes, ", ") + ".",
			Input:       object(toolProps(false), "name", "description", "type"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				tool, err := h.Manage.CreateTool(ctx, t.ID, resource.ToolInputOf(args))
				if err != nil {
					return nil, err
				}
				return map[string]any{"tool": resource.NewToolJSON(tool)}, nil
			}},
		{Name: "update_tool", Scope: auth.ScopeMCPToolsWrite,
			Description: "Change a tool's settings: only the fields given change.",
			Input:       object(toolProps(true), "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				tool, err := resource.UpdateTool(ctx, h.Manage, t.ID, id, args)
				if err != nil {
					return nil, err
				}
				return map[string]any{"tool": resource.NewToolJSON(tool)}, nil
			}},

		{Name: "list_conversations", Scope: auth.ScopeMCPConversationsRead, ReadOnly: true,
			Description: "List conversations, most recent first, with filters (dates, channel, segment, status, visitor, tool type, words in the messages).",
			Input:       object(conversationList),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				l := parley.NewConversationListing()
				if err := listingArgs(args, &l, &l.Scope); err != nil {
					return nil, err
				}
				page, err := h.Manage.ListConversations(ctx, t.ID, l)
				if err != nil {
					return nil, err
				}
				return resource.NewConversationListJSON(l, page), nil
			}},
		{Name: "read_conversation", Scope: auth.ScopeMCPConversationsRead, ReadOnly: true,
			Description: "Read one conversation: its messages, tool history, submissions and metadata.",
			Input:       object(schema{"id": idArg("conversation")}, "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				d, err := h.DB.ConversationDetail(ctx, t.ID, id)
				if err != nil {
					return nil, err
				}
				subs, err := h.DB.ConversationSubmissions(ctx, t.ID, d.Conversation.ID)
				if err != nil {
					return nil, err
				}
				return map[string]any{"conversation": resource.NewConversationDetailJSON(d, subs)}, nil
			}},
		{Name: "move_conversation", Scope: auth.ScopeMCPConversationsWrite,
			Description: "Take a conversation over for a person (status HUMAN, assignee: the name the visitor is shown), hand it back to the assistant (BOT), put it back in the queue for a person (ESCALATED) or close it (CLOSED). While a person holds it, the assistant does not answer the visitor.",
			Input: object(schema{
				"id":       idArg("conversation"),
				"status":   enum("The state to move to", parley.ConversationStatuses),
				"assignee": str("With HUMAN: the name the visitor is shown for the person who takes it", manage.MaxPersonName),
			}, "id", "status"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				var in manage.ConversationStateInput
				in.Problems = jsonbody.DecodeFields(args, &in)
				mv, err := h.Manage.MoveConversation(ctx, t.ID, id, in, nil)
				if err != nil {
					return nil, err
				}
				return map[string]any{"conversation": resource.NewConversationStateJSON(mv)}, nil
			}},
		{Name: "reply_to_conversation", Scope: auth.ScopeMCPConversationsWrite,
			Description: "Reply to the visitor as a person (shown with authorName). A conversation nobody holds is taken over for that person; one another person holds is refused, naming them.",
			Input: object(schema{
				"id":         idArg("conversation"),
				"content":    str("The reply, as plain text", manage.MaxReplyMessage),
				"authorName": str("The name the visitor is shown; defaults to the person the conversation was taken for", manage.MaxPersonName),
			}, "id", "content"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				var in manage.PersonReplyInput
				in.Problems = jsonbody.DecodeFields(args, &in)
				m, _, err := h.Manage.ReplyAsPerson(ctx, t.ID, id, in, nil)
				if err != nil {
					return nil, err
				}
				return map[string]any{"message": resource.NewConversationMessageJSON(m)}, nil
			}},
		{Name: "conversation_stats", Scope: auth.ScopeMCPConversationsRead, ReadOnly: true,
			Description: "Conversation analytics over a window (default the last 30 days, at most a year) in the tenant's time zone: totals, satisfaction, timeline, breakdowns, top tools, pages and questions, and resolution: the share resolved by the assistant, the share handed to a person and the votes, by bucket, channel and segment.",
			Input:       object(statsProps),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				l := parley.StatsListing{Scope: parley.ConversationScope{Location: resource.TenantLocation(t)}}
				if err := listingArgs(args, &l, &l.Scope); err != nil {
					return nil, err
				}
				q, st, err := h.Manage.ConversationStats(ctx, t.ID, l, h.Clock())
				if err != nil {
					return nil, err
				}
				return resource.NewConversationStatsJSON(l.Scope.Location, q, st), nil
			}},

		{Name: "list_visitors", Scope: auth.ScopeMCPVisitorsRead, ReadOnly: true,
			Description: "List the known visitors, newest first.",
			Input: object(schema{
				"limit":  integer("Visitors per page", 1, parley.MaxVisitorsPage),
				"offset": integer("Visitors to skip", 0, int(^uint32(0)>>1)),
				"search": str("Words to find in email, name or external id", parley.MaxVisitorSearch),
			}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				l := parley.NewVisitorListing()
				if err := listingArgs(args, &l); err != nil {
					return nil, err
				}
				vs, total, err := h.Manage.ListVisitorPage(ctx, t.ID, l)
				if err != nil {
					return nil, err
				}
				return resource.NewVisitorListJSON(l, vs, total), nil
			}},
		{Name: "read_visitor", Scope: auth.ScopeMCPVisitorsRead, ReadOnly: true,
			Description: "Read one visitor with their counts.",
			Input:       object(schema{"id": idArg("visitor")}, "id"),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				id, err := idOf(args)
				if err != nil {
					return nil, err
				}
				v, err := h.Manage.Visitor(ctx, t.ID, id)
				if err != nil {
					return nil, err
				}
				return map[string]any{"visitor": resource.NewVisitorDetailJSON(v)}, nil
			}},

		{Name: "read_persona", Scope: auth.ScopeMCPSettingsRead, ReadOnly: true,
			Description: "Read the assistant's persona: the settings of the dashboard's Persona page.",
			Input:       object(schema{}),
			Run: func(_ context.Context, t parley.Tenant, _ auth.Principal, _ map[string]json.RawMessage) (any, error) {
				return map[string]any{"persona": newPersonaJSON(t)}, nil
			}},
		{Name: "update_persona", Scope: auth.ScopeMCPSettingsWrite,
			Description: "Change the assistant's persona: only the fields given change.",
			Input: object(schema{
				"name":          str("The business's name", parley.MaxTenantName),
				"botName":       nullable(str("The assistant's name", parley.MaxBotName)),
				"botTitle":      nullable(str("The assistant's title", parley.MaxBotTitle)),
				"botLore":       nullable(str("Who the assistant is and what it knows of the business", parley.MaxBotLore)),
				"botTone":       enum("Tone", parley.BotTones),
				"contentPolicy": enum("What topics it may discuss", parley.ContentPolicies),
				"useTutoiement": boolean("French: address visitors with tu"),
				"allowEmojis":   boolean("Whether answers may hold emojis"),
			}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, args map[string]json.RawMessage) (any, error) {
				var in parley.TenantInput
				in.Problems = jsonbody.DecodeFields(args, &in)
				t, err := h.Manage.UpdateTenant(ctx, t, in)
				if err != nil {
					return nil, err
				}
				return map[string]any{"persona": newPersonaJSON(t)}, nil
			}},

		{Name: "read_plan_usage", Scope: auth.ScopeMCPBillingRead, ReadOnly: true,
			Description: "Read the tenant's plan, what it includes (features, limits), its bot seats, and this month's conversations against the limit, " +
				"with the conversations started each day (daily) and the other counts against the plan (usage): the dashboard's Plan and usage page.",
			Input: object(schema{}),
			Run: func(ctx context.Context, t parley.Tenant, _ auth.Principal, _ map[string]json.RawMessage) (any, error) {
				now := h.Clock()
				u, err := h.Manage.TenantPlan(ctx, t.Slug, now)
				if err != nil {
					return nil, err
				}
				usage, err := h.DB.TenantUsage(ctx, t.ID, now)
				if err != nil {
					return nil, err
				}
				// The usage's counts with the plan as just read, not as
				// the request's tenant had it.
				t.Plan, t.BotSeats = u.Plan, u.BotSeats
				return PlanUsageToolJSON{PlanUsageJSON: resource.NewPlanUsageJSON(u), Usage: resource.NewStatsJSON(t, usage)}, nil
			}},
	}, append(h.testTools(), h.gapTools()...)...))
}

// PlanUsageToolJSON is read_plan_usage's result: the tenant's plan and
// usage as the operator API and the dashboard's page read them, and the
// tenant's counts against the plan (usage, TenantStats).
type PlanUsageToolJSON struct {
	resource.PlanUsageJSON
	Usage resource.StatsJSON `json:"usage"`
}

// idOf is the required string argument id.
func idOf(args map[string]json.RawMessage) (string, error) {
	var id string
	if raw, ok := args["id"]; !ok || json.Unmarshal(raw, &id) != nil || strings.TrimSpace(id) == "" {
		return "", resource.FieldError("id", "is required: a non-empty string")
	}
	return id, nil
}

// listingArgs decodes a listing tool's arguments into dsts (the listing,
// then its scope): integers as JSON numbers, texts as strings, null as
// absent. An argument of another type is an error of ours.
func listingArgs(args map[string]json.RawMessage, dsts ...any) error {
	errs := parley.FieldErrors{}
	for _, dst := range dsts {
		for k, v := range jsonbody.DecodeFields(args, dst) {
			errs.Add(k, v)
		}
	}
	return errs.Err()
}

// RunManageTool runs the tool name for tenant t as principal p with the
// JSON object args: the one path every caller of a management tool takes.
// A missing scope, an unknown tool, arguments that are not an object or
// hold undeclared properties are errors of ours, as are the tool's own.
// The plan gate (MCP from the builder plan) is the caller's: /mcp answers
// 402 before any tool runs.
func RunManageTool(ctx context.Context, tools []ManageTool, t parley.Tenant, p auth.Principal, name string, args json.RawMessage) (any, error) {
	i := slices.IndexFunc(tools, func(tool ManageTool) bool { return tool.Name == name })
	if i < 0 {
		return nil, parley.Errorf(parley.KindNotFound, "Unknown tool %q", name)
	}
	tool := tools[i]
	if !slices.Contains(auth.MCPScopesOf(p), tool.Scope) {
		return nil, &parley.Error{Kind: parley.KindForbidden, Message: "Missing scope: " + tool.Scope,
			Details: map[string]string{"requiredScope": tool.Scope}}
	}
	fields := map[string]json.RawMessage{}
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if trimmed[0] != '{' || json.Unmarshal(trimmed, &fields) != nil {
			return nil, handlers.Invalid("The arguments must be a JSON object")
		}
	}
	props, _ := tool.Input["properties"].(schema)
	var unknown []string
	for k, v := range fields {
		if _, ok := props[k]; !ok {
			unknown = append(unknown, k)
		} else if jsonbody.HasNUL(v) {
			return nil, resource.FieldError(k, parley.NoNUL)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := make([]string, 0, len(props))
		for k := range props {
			known = append(known, k)
		}
		sort.Strings(known)
		errs := parley.FieldErrors{}
		for _, k := range unknown {
			errs.Add(k, "is not an argument of "+tool.Name+fmt.Sprintf(" (arguments: %s)", strings.Join(known, ", ")))
		}
		return nil, errs.Err()
	}
	return tool.Run(ctx, t, p, fields)
}
