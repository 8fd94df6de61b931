package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func toolRow(t parley.Tool) views.ToolRow {
	return views.ToolRow{ID: t.ID, Name: t.Name, Type: t.Type, Segment: handlers.Deref(t.SegmentSlug), Active: t.IsActive,
		Position: formatNumber(t.Position)}
}

// toolConfigForm shows a stored (or default) config of type typ.
func toolConfigForm(typ string, raw json.RawMessage) views.ToolConfigForm {
	if len(raw) == 0 {
		raw, _ = parley.ValidateToolConfig(typ, nil)
	}
	f := views.ToolConfigForm{Type: typ, FieldTypes: parley.FormFieldTypes}
	switch typ {
	case parley.ToolSubmitForm:
		var c parley.SubmitFormConfig
		_ = json.Unmarshal(raw, &c)
		for _, fl := range c.Fields {
			f.Fields = append(f.Fields, views.ToolFieldRow{Name: fl.Name, Label: fl.Label, Type: fl.Type, Required: fl.Required})
		}
		if len(f.Fields) == 0 {
			f.Fields = []views.ToolFieldRow{{Type: "text"}}
		}
		f.Confirmation = c.ConfirmationMessage
	case parley.ToolGenerateQuote:
		c := parley.QuoteConfig{ValidityDays: 30} // the default, when raw is a failed default
		_ = json.Unmarshal(raw, &c)
		f.Currency, f.TaxRate, f.ValidityDays = c.Currency, formatNumber(c.TaxRate), strconv.Itoa(c.ValidityDays)
		for _, it := range c.Items {
			opts := make([]string, len(it.Options))
			for i, o := range it.Options {
				opts[i] = o.Name + "=" + formatNumber(o.UnitPrice)
			}
			f.Items = append(f.Items, views.QuoteItemRow{Name: it.Name, Description: it.Description,
				UnitPrice: formatNumber(it.UnitPrice), Unit: it.Unit, Options: strings.Join(opts, "; ")})
		}
		if len(f.Items) == 0 {
			f.Items = []views.QuoteItemRow{{}}
		}
	case parley.ToolBookMeeting:
		var c parley.MeetingConfig
		_ = json.Unmarshal(raw, &c)
		f.DurationMinutes, f.BufferMinutes = strconv.Itoa(c.DurationMinutes), strconv.Itoa(c.BufferMinutes)
		f.BookingWindowDays, f.MinNoticeHours = strconv.Itoa(c.BookingWindowDays), strconv.Itoa(c.MinNoticeHours)
	case parley.ToolEscalateToHuman:
		var c parley.EscalateConfig
		_ = json.Unmarshal(raw, &c)
		f.HandoffMessage = c.HandoffMessage
	case parley.ToolRememberFact:
		var c parley.RememberConfig
		_ = json.Unmarshal(raw, &c)
		f.AllowedKeys = strings.Join(c.AllowedKeys, ", ")
	case parley.ToolRecommendProduct:
		var c parley.RecommendConfig
		_ = json.Unmarshal(raw, &c)
		f.MaxResults = strconv.Itoa(c.MaxResults)
	}
	return f
}

// toolTypeOptions are the types the dashboard creates: the API's user types, never synthetic ones.
func toolTypeOptions() []views.Option {
	out := make([]views.Option, len(parley.UserToolTypes))
	for i, t := range parley.UserToolTypes {
		out[i] = views.Option{Value: t, Label: views.ToolTypeLabel(t)}
	}
	return out
}

// withToolChoices adds the type and segment choices to a tool form.
func (h *Tools) withToolChoices(c echo.Context, f views.ToolForm) (views.ToolForm, error) {
	segs, err := h.DB.ListSegments(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return f, err
	}
	f.Segments = nil
	for _, s := range segs {
		f.Segments = append(f.Segments, views.Option{Value: s.ID, Label: s.Name + " (" + s.Slug + ")"})
		if f.ID != "" && s.LeadToolID != nil && *s.LeadToolID == f.ID {
			f.LeadOf = &views.Option{Value: s.ID, Label: s.Name}
		}
	}
	f.Types = toolTypeOptions()
	f.Config.FieldTypes = parley.FormFieldTypes
	return f, nil
}

func (h *Tools) renderToolForm(c echo.Context, status int, f views.ToolForm) error {
	f, err := h.withToolChoices(c, f)
	if err != nil {
		return err
	}
	title := "New tool"
	if f.ID != "" {
		title = "Edit tool"
	}
	return handlers.Render(c, status, views.ToolFormPage(dash.Page(c, h.Sessions, title, "tools"), f))
}

// ShowToolsPage lists the tenant's tools.
func (h *Tools) ShowToolsPage(c echo.Context) error {
	ctx, tenantID := c.Request().Context(), dash.AdminFrom(c).Tenant.ID
	tools, err := h.Manage.ListTools(ctx, tenantID)
	if err != nil {
		return err
	}
	segs, err := h.DB.ListSegments(ctx, tenantID)
	if err != nil {
		return err
	}
	leadOf := map[string]*views.Option{}
	for _, s := range segs {
		if s.LeadToolID != nil {
			leadOf[*s.LeadToolID] = &views.Option{Value: s.ID, Label: s.Name}
		}
	}
	rows := make([]views.ToolRow, len(tools))
	for i, t := range tools {
		rows[i] = toolRow(t)
		rows[i].LeadOf = leadOf[t.ID]
	}
	return handlers.Render(c, http.StatusOK, views.ToolsPage(dash.Page(c, h.Sessions, "Tools", "tools"), rows))
}

// ShowNewToolPage renders the create form for the type asked (the first type by default).
func (h *Tools) ShowNewToolPage(c echo.Context) error {
	tools, err := h.Manage.ListTools(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return err
	}
	pos := 0.0
	for _, t := range tools {
		pos = max(pos, math.Floor(t.Position)+1) // new tools go last
	}
	typ := c.QueryParam("type")
	if !slices.Contains(parley.UserToolTypes, typ) {
		typ = parley.UserToolTypes[0]
	}
	return h.renderToolForm(c, http.StatusOK, views.ToolForm{Type: typ, Active: true, Position: formatNumber(pos),
		Config: toolConfigForm(typ, nil)})
}

// ShowToolConfigFields is the htmx fragment of a type's settings, swapped in when the type changes.
func (h *Tools) ShowToolConfigFields(c echo.Context) error {
	typ := c.QueryParam("type")
	if !slices.Contains(parley.UserToolTypes, typ) {
		return handlers.Invalid("type must be one of %s", strings.Join(parley.UserToolTypes, ", "))
	}
	return handlers.Render(c, http.StatusOK, views.ToolConfigFields(toolConfigForm(typ, nil)))
}

// toolFromForm reads a tool form into the API's body and the form to show
// again; problems of reading (a number that is not one) go into errs.
func toolFromForm(form url.Values, typ string, cur *parley.Tool) (parley.ToolInput, views.ToolForm, parley.FieldErrors) {
	get := func(k string) string { return strings.TrimSpace(form.Get(k)) }
	errs := parley.FieldErrors{}
	f := views.ToolForm{Name: form.Get("name"), Description: form.Get("description"), Type: typ,
		SegmentID: get("segmentId"), Active: form.Get("isActive") == "true", Position: get("position")}
	b := parley.ToolInput{Name: parley.Some(form.Get("name")), Description: parley.Some(form.Get("description")),
		SegmentID: parley.Some(get("segmentId")), IsActive: parley.Some(f.Active)}
	if cur == nil {
		b.Type = parley.Some(typ)
	}
	if pos, err := strconv.ParseFloat(f.Position, 64); err != nil {
		errs.Add("position", "must be a number")
	} else {
		b.Position = parley.Some(pos)
	}
	cfg := views.ToolConfigForm{Type: typ, FieldTypes: parley.FormFieldTypes}
	// intField adds a whole number to the config; a blank leaves the default.
	intField := func(conf map[string]any, name string, shown *string) {
		*shown = get(name)
		if *shown == "" {
			return
		}
		n, err := strconv.Atoi(*shown)
		if err != nil {
			errs.Add(name, "must be a whole number")
			return
		}
		conf[name] = n
	}
	conf := map[string]any{}
	switch typ {
	case parley.ToolSubmitForm:
		fields := []parley.FormField{}
		for _, r := range dash.IndexedFormRows(form, "field") {
			row := views.ToolFieldRow{Name: dash.FormFieldName(r["name"], r["label"]), Label: strings.TrimSpace(r["label"]), Type: r["type"], Required: r["required"] == "true"}
			if row.Name == "" && row.Label == "" {
				continue // an empty row is one the user did not fill
			}
			cfg.Fields = append(cfg.Fields, row)
			fields = append(fields, parley.FormField{Name: row.Name, Label: row.Label, Type: row.Type, Required: row.Required})
		}
		if len(cfg.Fields) == 0 {
			cfg.Fields = []views.ToolFieldRow{{Type: "text"}}
		}
		conf["fields"] = fields
		cfg.Confirmation = form.Get("confirmationMessage")
		if strings.TrimSpace(cfg.Confirmation) != "" {
			conf["confirmationMessage"] = strings.TrimSpace(cfg.Confirmation)
		}
	case parley.ToolGenerateQuote:
		cfg.Currency = strings.ToUpper(get("currency"))
		conf["currency"] = cfg.Currency
		if cfg.TaxRate = get("taxRate"); cfg.TaxRate != "" {
			if v, err := strconv.ParseFloat(cfg.TaxRate, 64); err != nil {
				errs.Add("taxRate", "must be a number")
			} else {
				conf["taxRate"] = v
			}
		}
		intField(conf, "validityDays", &cfg.ValidityDays)
		items := []parley.QuoteItem{}
		for _, r := range dash.IndexedFormRows(form, "item") {
			row := views.QuoteItemRow{Name: strings.TrimSpace(r["name"]), Description: strings.TrimSpace(r["description"]),
				UnitPrice: strings.TrimSpace(r["unitPrice"]), Unit: strings.TrimSpace(r["unit"]), Options: strings.TrimSpace(r["options"])}
			if row == (views.QuoteItemRow{}) {
				continue
			}
			cfg.Items = append(cfg.Items, row)
			where := fmt.Sprintf("item %d", len(cfg.Items))
			it := parley.QuoteItem{Name: row.Name, Description: row.Description, Unit: row.Unit}
			if p, err := strconv.ParseFloat(row.UnitPrice, 64); err != nil {
				errs.Add("items", where+": unit price must be a number such as 120 or 49.90")
			} else {
				it.UnitPrice = p
			}
			for _, o := range strings.FieldsFunc(row.Options, func(r rune) bool { return r == ';' || r == '\n' }) {
				name, price, ok := strings.Cut(o, "=")
				p, err := strconv.ParseFloat(strings.TrimSpace(price), 64)
				if !ok || err != nil {
					errs.Add("items", where+": write each option as Name=price, separated by semicolons")
					continue
				}
				it.Options = append(it.Options, parley.QuoteOption{Name: strings.TrimSpace(name), UnitPrice: p})
			}
			items = append(items, it)
		}
		if len(cfg.Items) == 0 {
			cfg.Items = []views.QuoteItemRow{{}}
		}
		conf["items"] = items
	case parley.ToolBookMeeting:
		intField(conf, "durationMinutes", &cfg.DurationMinutes)
		intField(conf, "bufferMinutes", &cfg.BufferMinutes)
		intField(conf, "bookingWindowDays", &cfg.BookingWindowDays)
		intField(conf, "minNoticeHours", &cfg.MinNoticeHours)
	case parley.ToolEscalateToHuman:
		cfg.HandoffMessage = form.Get("handoffMessage")
		if strings.TrimSpace(cfg.HandoffMessage) != "" {
			conf["handoffMessage"] = strings.TrimSpace(cfg.HandoffMessage)
		}
		cfg.WebhookURL = get("webhookUrl")
		b.WebhookURL = parley.Some(cfg.WebhookURL)
		cfg.HasSecret = cur != nil && cur.WebhookSecret != nil
		switch secret := form.Get("webhookSecret"); {
		case secret != "":
			b.WebhookSecret = parley.Some(secret)
		case form.Get("clearWebhookSecret") == "true":
			b.WebhookSecret = parley.Some("") // the API's way to remove it
		}
	case parley.ToolRememberFact:
		cfg.AllowedKeys = form.Get("allowedKeys")
		keys := []string{}
		for _, k := range strings.Split(cfg.AllowedKeys, ",") {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, k)
			}
		}
		conf["allowedKeys"] = keys
	case parley.ToolRecommendProduct:
		intField(conf, "maxResults", &cfg.MaxResults)
	}
	raw, _ := json.Marshal(conf)
	b.Config = parley.Some(json.RawMessage(raw))
	f.Config = cfg
	return b, f, errs
}

// saveToolForm validates a submitted tool form with the API's rules and saves
// it, or re-renders it with the errors.
func (h *Tools) saveToolForm(c echo.Context, cur *parley.Tool) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return handlers.Invalid("Could not read the form")
	}
	typ := strings.TrimSpace(form.Get("type"))
	if cur != nil {
		typ = cur.Type
	}
	b, f, errs := toolFromForm(form, typ, cur)
	if cur != nil {
		f.ID = cur.ID
	}
	b.Problems = errs
	var t parley.Tool
	if cur == nil {
		t, err = h.Manage.CreateTool(ctx, a.Tenant.ID, b)
	} else {
		t, err = h.Manage.UpdateTool(ctx, *cur, b)
	}
	if err == nil {
		h.Sessions.Put(ctx, dash.SessFlash, fmt.Sprintf("Tool %s saved.", t.Name))
		return c.Redirect(http.StatusSeeOther, "/admin/tools")
	}
	fe, status, ok := dash.FailedForm(err)
	if !ok {
		return err
	}
	// The config's problems are shown in its section, the others by their fields.
	f.Errors, f.Config.Errors = views.Errors{}, views.Errors{}
	for k, v := range fe {
		switch k {
		case "config", "fields", "items", "currency", "taxRate", "validityDays", "durationMinutes", "bufferMinutes",
			"bookingWindowDays", "minNoticeHours", "webhookUrl", "webhookSecret", "maxResults":
			f.Config.Errors[k] = v
		default:
			f.Errors[k] = v
		}
	}
	if !slices.Contains(parley.UserToolTypes, typ) {
		f.Type = parley.UserToolTypes[0] // the select shows it; the type's error says what was wrong
		f.Config = toolConfigForm(f.Type, nil)
	}
	return h.renderToolForm(c, status, f)
}

// SaveNewTool creates a tool from the form.
func (h *Tools) SaveNewTool(c echo.Context) error { return h.saveToolForm(c, nil) }

// ShowEditToolPage renders a tool's edit form.
func (h *Tools) ShowEditToolPage(c echo.Context) error {
	t, err := h.Manage.Tool(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	cfg := toolConfigForm(t.Type, t.Config)
	cfg.WebhookURL, cfg.HasSecret = handlers.Deref(t.WebhookURL), t.WebhookSecret != nil
	return h.renderToolForm(c, http.StatusOK, views.ToolForm{ID: t.ID, Name: t.Name, Description: t.Description,
		Type: t.Type, SegmentID: handlers.Deref(t.SegmentID), Active: t.IsActive, Position: formatNumber(t.Position), Config: cfg})
}

// SaveTool saves a tool's edit form; the type stays.
func (h *Tools) SaveTool(c echo.Context) error {
	t, err := h.Manage.Tool(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return h.saveToolForm(c, &t)
}

// RemoveTool deletes a tool; htmx gets an empty answer that removes the row.
func (h *Tools) RemoveTool(c echo.Context) error {
	ctx := c.Request().Context()
	if err := h.Manage.DeleteTool(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id")); err != nil {
		return err
	}
	if dash.IsHTMX(c) {
		return c.HTML(http.StatusOK, "")
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Tool deleted.")
	return c.Redirect(http.StatusSeeOther, "/admin/tools")
}
