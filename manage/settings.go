package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/knowledge"
)

// The tenant's connections to its own servers: its MCP server and its
// embedding endpoint. Their keys are sealed here and never read back out.

// sealKey is the stored key's change of a save: unset keeps it, null or
// "" removes it, a value is sealed.
func (s *Service) sealKey(key parley.Opt[string]) parley.Opt[[]byte] {
	switch {
	case !key.Set:
		return parley.Opt[[]byte]{}
	case key.Null || key.Value == "":
		return parley.Opt[[]byte]{Set: true, Null: true}
	}
	return parley.Some(s.Box.Seal([]byte(key.Value)))
}

// MCPSettings reads the tenant's MCP server configuration.
func (s *Service) MCPSettings(ctx context.Context, tenantID string) (db.MCPSettings, error) {
	return s.DB.MCPSettings(ctx, tenantID)
}

// SaveMCPSettings saves the tenant's MCP server (the builder plan or
// above: PLAN_REQUIRED otherwise); unset max tools keep the stored number
// (10 when none is configured).
func (s *Service) SaveMCPSettings(ctx context.Context, t parley.Tenant, in parley.MCPSettingsInput) (db.MCPSettings, error) {
	if !t.PlanInfo().MCP {
		return db.MCPSettings{}, parley.PlanRequired("MCP tools", t.Plan, "builder")
	}
	if err := in.Check(s.address(ctx)).Err(); err != nil {
		return db.MCPSettings{}, err
	}
	maxTools := parley.DefaultMCPTools
	if in.MaxTools.Set && !in.MaxTools.Null {
		maxTools = in.MaxTools.Value
	} else {
		// Kept: the stored number, read only when the save has none.
		cur, err := s.DB.MCPSettings(ctx, t.ID)
		if err != nil {
			return cur, err
		}
		if cur.URL != nil {
			maxTools = cur.MaxTools
		}
	}
	return s.DB.SaveMCPSettings(ctx, t.ID, in.URL.Value, maxTools, s.sealKey(in.APIKey))
}

// ClearMCPSettings removes the tenant's MCP server configuration, on every
// plan.
func (s *Service) ClearMCPSettings(ctx context.Context, tenantID string) error {
	return s.DB.ClearMCPSettings(ctx, tenantID)
}

// EmbeddingSettings reads the tenant's own embedding endpoint.
func (s *Service) EmbeddingSettings(ctx context.Context, tenantID string) (knowledge.EmbeddingSettings, error) {
	return s.DB.EmbeddingSettings(ctx, tenantID)
}

// SaveEmbeddingSettings saves the tenant's own embedding endpoint (on
// every plan); its entries are embedded there from now on (the job is
// enqueued with the save).
func (s *Service) SaveEmbeddingSettings(ctx context.Context, tenantID string, in parley.EmbeddingsInput) (knowledge.EmbeddingSettings, error) {
	cur, err := s.DB.EmbeddingSettings(ctx, tenantID)
	if err != nil {
		return cur, err
	}
	if err := db.CheckIfMatch(ctx, cur.ETag()); err != nil {
		return cur, err
	}
	if err := in.Check(cur.SealedAPIKey != nil, s.address(ctx)).Err(); err != nil {
		return cur, err
	}
	var dims *int
	if in.Dimensions.Set && !in.Dimensions.Null {
		dims = &in.Dimensions.Value
	}
	return s.DB.SaveEmbeddingSettings(ctx, tenantID, in.URL.Value, in.Model.Value, dims, s.sealKey(in.APIKey))
}

// ClearEmbeddingSettings removes the tenant's own endpoint: its knowledge
// base goes back to the operator's endpoint, if any.
func (s *Service) ClearEmbeddingSettings(ctx context.Context, tenantID string) error {
	return s.DB.ClearEmbeddingSettings(ctx, tenantID)
}

// EmbeddingState is which endpoint embeds the tenant's knowledge base
// (Source: "tenant", its own; "operator", the service's; "none"), its
// settings, and how far its entries are embedded by it (Model "" and a
// zero Status with none).
type EmbeddingState struct {
	Settings knowledge.EmbeddingSettings
	Source   string
	Model    string
	Status   knowledge.EmbeddingStatus
}

// EmbeddingState reads the tenant's endpoint and its progress;
// operatorModel is the operator's endpoint's model ("" without one).
func (s *Service) EmbeddingState(ctx context.Context, tenantID, operatorModel string) (EmbeddingState, error) {
	settings, err := s.DB.EmbeddingSettings(ctx, tenantID)
	if err != nil {
		return EmbeddingState{}, err
	}
	st := EmbeddingState{Settings: settings, Source: "none"}
	switch {
	case settings.ModelKey() != "":
		st.Source, st.Model = "tenant", settings.ModelKey()
	case operatorModel != "":
		st.Source, st.Model = "operator", operatorModel
	default:
		return st, nil
	}
	st.Status, err = s.DB.EmbeddingStatus(ctx, tenantID, st.Model)
	return st, err
}
