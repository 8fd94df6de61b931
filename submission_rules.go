package parley

import "slices"

// The rules of a submission's management: the statuses it may be given.

// SubmissionStatuses are the allowed values of a submission's status, in
// their order of progress (any may follow any other).
var SubmissionStatuses = []string{SubmissionNew, SubmissionContacted, SubmissionResolved}

// CheckSubmissionStatus refuses a status outside SubmissionStatuses (an
// empty one included: missing, or not a string, where the caller read it)
// with the invalid-kind Error every surface reports.
func CheckSubmissionStatus(status string) error {
	if slices.Contains(SubmissionStatuses, status) {
		return nil
	}
	return &Error{Kind: KindInvalid, Message: "status must be NEW, CONTACTED or RESOLVED",
		Details: map[string]string{"status": "must be NEW, CONTACTED or RESOLVED"}}
}
