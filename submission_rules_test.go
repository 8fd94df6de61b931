package parley

import "testing"

func TestCheckSubmissionStatus(t *testing.T) {
	for _, s := range []string{SubmissionNew, SubmissionContacted, SubmissionResolved} {
		if err := CheckSubmissionStatus(s); err != nil {
			t.Errorf("CheckSubmissionStatus(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"", "new", "CLOSED", " NEW"} {
		err := CheckSubmissionStatus(s)
		if ErrorKind(err) != KindInvalid {
			t.Fatalf("CheckSubmissionStatus(%q) = %v, want an invalid-kind error", s, err)
		}
		e := err.(*Error)
		d, _ := e.Details.(map[string]string)
		if e.Message != "status must be NEW, CONTACTED or RESOLVED" || d["status"] != "must be NEW, CONTACTED or RESOLVED" {
			t.Errorf("CheckSubmissionStatus(%q) = %+v", s, e)
		}
	}
}
