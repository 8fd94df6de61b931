package manage

import (
	"context"
	"fmt"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// The tools the assistant may run (forms, quotes, meetings, handover,
// memory, products): created, updated, read, listed and deleted.

// checkTool checks in against cur (nil when creating), seals its webhook
// secret and resolves its segment: the write to apply, or its problems.
func (s *Service) checkTool(ctx context.Context, tenantID string, in parley.ToolInput, cur *parley.Tool) (db.ToolWrite, parley.FieldErrors) {
	errs := in.Check(cur, s.urlVetter(ctx, false))
	w := db.ToolWrite{Name: in.Name, Description: in.Description, Type: in.Type, Config: in.Config, IsActive: in.IsActive,
		Position: in.Position, WebhookURL: in.WebhookURL}
	if in.WebhookSecret.Set {
		switch {
		case in.WebhookSecret.Null || in.WebhookSecret.Value == "":
			w.WebhookSecret = parley.Opt[[]byte]{Set: true, Null: true}
		case errs["webhookSecret"] == "":
			w.WebhookSecret = parley.Some(s.Box.Seal([]byte(in.WebhookSecret.Value)))
		}
	}
	if in.SegmentID.Set {
		if in.SegmentID.Null || in.SegmentID.Value == "" {
			w.SegmentID = parley.Opt[string]{Set: true, Null: true}
		} else if seg, err := s.DB.Segment(ctx, tenantID, in.SegmentID.Value); err != nil {
			errs.Add("segmentId", fmt.Sprintf("no segment with id or slug %q", in.SegmentID.Value))
		} else {
			w.SegmentID = parley.Some(seg.ID)
		}
	}
	return w, errs
}

// CreateTool creates a tool of one of the configurable types.
func (s *Service) CreateTool(ctx context.Context, tenantID string, in parley.ToolInput) (parley.Tool, error) {
	w, errs := s.checkTool(ctx, tenantID, in, nil)
	if err := errs.Err(); err != nil {
		return parley.Tool{}, err
	}
	return s.DB.CreateTool(ctx, tenantID, w)
}

// UpdateTool changes the fields of in that are set, of cur, the tool as
// the caller read it (Tool). A tool that stops being an escalation loses
// its webhook.
func (s *Service) UpdateTool(ctx context.Context, cur parley.Tool, in parley.ToolInput) (parley.Tool, error) {
	w, errs := s.checkTool(ctx, cur.TenantID, in, &cur)
	if err := errs.Err(); err != nil {
		return parley.Tool{}, err
	}
	if w.Type.Set && w.Type.Value != parley.ToolEscalateToHuman && cur.Type == parley.ToolEscalateToHuman {
		w.WebhookURL = parley.Opt[string]{Set: true, Null: true} // a webhook only belongs to escalation
		w.WebhookSecret = parley.Opt[[]byte]{Set: true, Null: true}
	}
	return s.DB.UpdateTool(ctx, cur.TenantID, cur.ID, w)
}

// Tool reads one of the tenant's tools.
func (s *Service) Tool(ctx context.Context, tenantID, id string) (parley.Tool, error) {
	return s.DB.Tool(ctx, tenantID, id)
}

// ListTools lists the tenant's tools, lowest position first.
func (s *Service) ListTools(ctx context.Context, tenantID string) ([]parley.Tool, error) {
	return s.DB.ListTools(ctx, tenantID)
}

// DeleteTool deletes one of the tenant's tools.
func (s *Service) DeleteTool(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteTool(ctx, tenantID, id)
}
