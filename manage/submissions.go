package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
)

// The tenant's submissions: what its lead tools captured. They are created
// by the tools themselves (the lead form, the agent); managing them is
// reading, moving through the statuses, and erasing.

// UpdateSubmissionStatus moves the submission id to status, one of
// parley.SubmissionStatuses, with its submission.updated event; setting the
// current status again changes nothing and fires no event.
func (s *Service) UpdateSubmissionStatus(ctx context.Context, tenantID, id, status string) (parley.Submission, error) {
	if err := parley.CheckSubmissionStatus(status); err != nil {
		return parley.Submission{}, err
	}
	sub, _, err := s.DB.UpdateSubmissionStatus(ctx, tenantID, id, status)
	return sub, err
}

// DeleteSubmission erases the submission id and its recorded events; its
// conversation stays.
func (s *Service) DeleteSubmission(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteSubmission(ctx, tenantID, id)
}

// Submission reads one of the tenant's submissions.
func (s *Service) Submission(ctx context.Context, tenantID, id string) (parley.Submission, error) {
	return s.DB.Submission(ctx, tenantID, id)
}

// Submissions reads a page of the tenant's submissions, newest first, as the
// surface's checked filter f selects them; with the counters on page 1.
func (s *Service) Submissions(ctx context.Context, tenantID string, f listing.SubmissionFilter) (listing.SubmissionPage, error) {
	return s.DB.ListSubmissions(ctx, tenantID, f)
}
