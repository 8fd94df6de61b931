package manage

import (
	"context"
	"fmt"
	"slices"

	"github.com/parley/parley"
)

// The rules of the tenant's settings for a person's part in its
// conversations (issue 36, "Nobody there"): when a person can answer
// (humanHours), how long an escalated conversation waits for one
// (humanWaitSeconds) and how long a person's silence hands a taken one back
// to the assistant (humanIdleSeconds). Kept here rather than beside the
// other tenant rules, the root package being at its size budget.

// The bounds and defaults of the waits, in seconds; the OpenAPI document
// states them.
const (
	DefaultHumanWait = 180
	MinHumanWait     = 30
	MaxHumanWait     = 3600
	DefaultHumanIdle = 600
	MinHumanIdle     = 60
	MaxHumanIdle     = 86400
)

// HumanHoursModes are the values of humanHours.mode: a person may answer
// at any hour; in the calendar connector's office hours; in hours of the
// tenant's own (Days).
var HumanHoursModes = []string{parley.HoursAlways, parley.HoursCalendar, parley.HoursWeekly}

// checkPeopleSettings adds the problems of in's humanHours,
// humanWaitSeconds and humanIdleSeconds to errs; hours in the calendar's
// office hours need a calendar connector (read only then).
func (s *Service) checkPeopleSettings(ctx context.Context, errs parley.FieldErrors, tenantID string, in *parley.TenantInput) error {
	if parley.NotNull(errs, "humanWaitSeconds", in.HumanWaitSeconds) {
		if v := in.HumanWaitSeconds.Value; v < MinHumanWait || v > MaxHumanWait {
			errs.Add("humanWaitSeconds", fmt.Sprintf("must be between %d and %d seconds", MinHumanWait, MaxHumanWait))
		}
	}
	if parley.NotNull(errs, "humanIdleSeconds", in.HumanIdleSeconds) {
		if v := in.HumanIdleSeconds.Value; v < MinHumanIdle || v > MaxHumanIdle {
			errs.Add("humanIdleSeconds", fmt.Sprintf("must be between %d and %d seconds", MinHumanIdle, MaxHumanIdle))
		}
	}
	if _, bad := errs["humanHours"]; bad || !parley.NotNull(errs, "humanHours", in.HumanHours) {
		return nil
	}
	h := &in.HumanHours.Value
	switch h.Mode {
	case parley.HoursWeekly:
		if len(h.Days) == 0 {
			errs.Add("humanHours", "days: give the hours of at least one day (a day left out is closed), or choose always")
		}
		h.Days.Validate(errs, "humanHours")
	case parley.HoursAlways, parley.HoursCalendar:
		if len(h.Days) > 0 {
			errs.Add("humanHours", "days: only with mode weekly")
		}
		if h.Mode == parley.HoursCalendar {
			c, err := s.DB.CalendarConnector(ctx, tenantID)
			if err != nil {
				return err
			}
			if c == nil {
				errs.Add("humanHours", "mode calendar uses the calendar's office hours: connect a calendar first, or choose weekly")
			}
		}
	default:
		if !slices.Contains(HumanHoursModes, h.Mode) {
			errs.Add("humanHours", "mode must be always, calendar or weekly")
		}
	}
	return nil
}
