package handlers

// The query parameters the REST API and the dashboard's lists read alike.

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
)

// ScopeQuery reads the query's from, to, channel and segment, dates in loc.
func ScopeQuery(c echo.Context, loc *time.Location) parley.ConversationScope {
	return parley.ConversationScope{From: c.QueryParam("from"), To: c.QueryParam("to"), Channel: c.QueryParam("channel"),
		Segment: c.QueryParam("segment"), Location: loc}
}

// QueryInt reads the integer query parameter name into n when it is
// given; a value that is not an integer reads as math.MinInt, outside every
// range, so that the listing's check names its bounds.
func QueryInt(c echo.Context, name string, n *int) {
	v := c.QueryParam(name)
	if v == "" {
		return
	}
	var err error
	if *n, err = strconv.Atoi(v); err != nil {
		*n = math.MinInt
	}
}

// IntParam reads an optional integer query parameter within [min, max].
func IntParam(c echo.Context, name string, def, min, max int) (int, error) {
	n := def
	QueryInt(c, name, &n)
	errs := parley.FieldErrors{}
	parley.CheckCount(errs, name, n, min, max)
	return n, parley.ParamsError(errs)
}

var UUIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// CheckSubmissionFilter reads and checks the query of a submissions list; the
// search is read and checked only when searched.
func CheckSubmissionFilter(c echo.Context, searched bool) (listing.SubmissionFilter, error) {
	var f listing.SubmissionFilter
	var err error
	if f.Page, err = IntParam(c, "page", 1, 1, parley.MaxPage); err != nil {
		return f, err
	}
	if f.Limit, err = IntParam(c, "limit", defaultSubmissionsLimit, 1, maxSubmissionsLimit); err != nil {
		return f, err
	}
	if v := c.QueryParam("toolType"); v != "" {
		f.ToolType = strings.ToUpper(v)
		if !slices.Contains(parley.UserToolTypes, f.ToolType) && !slices.Contains(parley.SyntheticToolTypes, f.ToolType) {
			return f, QueryError("toolType", "must be one of "+strings.Join(append(slices.Clone(parley.UserToolTypes), parley.SyntheticToolTypes...), ", "))
		}
	}
	if f.ToolID = c.QueryParam("toolId"); f.ToolID != "" && !UUIDPattern.MatchString(f.ToolID) {
		return f, QueryError("toolId", "must be a uuid")
	}
	if f.Status = c.QueryParam("status"); f.Status != "" && !slices.Contains(parley.SubmissionStatuses, f.Status) {
		return f, QueryError("status", "must be NEW, CONTACTED or RESOLVED")
	}
	if f.Channel = c.QueryParam("channel"); f.Channel != "" && !slices.Contains(submissionChannels, f.Channel) {
		return f, QueryError("channel", "must be web, voice, api or form")
	}
	if searched {
		f.Search = strings.TrimSpace(c.QueryParam("search"))
		if n := utf8.RuneCountInString(f.Search); n < minSubmissionSearchChars || n > maxSubmissionSearchChars {
			return f, QueryError("search", fmt.Sprintf("must be %d to %d characters", minSubmissionSearchChars, maxSubmissionSearchChars))
		}
	}
	if f.From, err = timeParam(c, "from", false); err != nil {
		return f, err
	}
	if f.To, err = timeParam(c, "to", true); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return f, QueryError("to", "must be after from")
	}
	return f, nil
}

// Submissions list limits: the spec's, and the search cap chosen here
// (documented in the OpenAPI document).
const (
	defaultSubmissionsLimit  = 30
	maxSubmissionsLimit      = 100
	minSubmissionSearchChars = 2
	maxSubmissionSearchChars = 200
)

// submissionChannels are where a submission can come from.
var submissionChannels = []string{parley.ChannelWeb, parley.ChannelVoice, parley.ChannelAPI, parley.ChannelForm}

// QueryError is the 400 of an invalid value of a known query parameter.
func QueryError(name, problem string) error {
	return &parley.Error{Kind: parley.KindInvalid, Message: name + " " + problem, Details: map[string]string{name: problem}}
}

// timeParam reads an RFC 3339 date-time or a YYYY-MM-DD date (midnight UTC);
// with endOfDay a date means the midnight after it, so that an exclusive
// upper bound still takes the whole day in.
func timeParam(q echo.Context, name string, endOfDay bool) (time.Time, error) {
	return timeParamIn(q, name, endOfDay, time.UTC)
}

// timeParamIn is timeParam with a date meaning midnight in loc.
func timeParamIn(q echo.Context, name string, endOfDay bool, loc *time.Location) (time.Time, error) {
	return parseTime(q.QueryParams(), name, endOfDay, loc)
}
