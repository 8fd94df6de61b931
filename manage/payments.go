package manage

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/business"
)

// The tenant's payment connector (Stripe): its key is sealed here and
// never shown again. Asking Stripe about a key stays with the surfaces
// (agent code, which manage does not import).

// PaymentConnector reads the tenant's connector, nil when none.
func (s *Service) PaymentConnector(ctx context.Context, tenantID string) (*parley.PaymentConnector, error) {
	return s.DB.PaymentConnector(ctx, tenantID)
}

// SavePaymentConnector connects Stripe (the key is required the first
// time) or changes the fields set; a key given is sealed.
func (s *Service) SavePaymentConnector(ctx context.Context, tenantID string, in parley.PaymentInput) (parley.PaymentConnector, error) {
	cur, err := s.DB.PaymentConnector(ctx, tenantID)
	if err != nil {
		return parley.PaymentConnector{}, err
	}
	if err := db.CheckIfMatch(ctx, business.PaymentETag(cur)); err != nil {
		return parley.PaymentConnector{}, err
	}
	p, errs := in.Apply(tenantID, cur)
	if err := errs.Err(); err != nil {
		return p, err
	}
	if key := in.Key(); key != "" {
		p.SealedKey = s.Box.Seal([]byte(key))
	}
	return s.DB.SavePaymentConnector(ctx, p)
}

// DeletePaymentConnector deletes the tenant's connector and its key: the
// agent stops offering payment links. None is parley.NoPaymentConnector.
func (s *Service) DeletePaymentConnector(ctx context.Context, tenantID string) error {
	removed, err := s.DB.DeletePaymentConnector(ctx, tenantID)
	if err == nil && !removed {
		err = parley.NoPaymentConnector()
	}
	return err
}
