package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parley/parley/db/sealed"
)

// keyCheckPlain is what the key check seals: any constant does, since
// AES-GCM's tag fails under any other key.
var keyCheckPlain = []byte("parley secret key check")

// ErrKeyMismatch is CheckKey's error when the secret key cannot open the
// database's secrets: the message says what to do, and no process may run
// on such a pair, since every tenant secret would fail one by one.
var ErrKeyMismatch = errors.New("PARLEY_SECRET_KEY does not open this database's secrets: they were sealed with another key. " +
	"Set the key this database was written with (the one kept with its backups); during a rotation, the new key " +
	"as PARLEY_SECRET_KEY and the old one as PARLEY_SECRET_KEY_PREVIOUS")

// CheckKey tells whether box opens the secrets of the database of pool:
// it opens the key check (migration 00053), or, before one was written,
// one existing sealed value and then writes the check. ErrKeyMismatch when
// it cannot.
func CheckKey(ctx context.Context, pool *pgxpool.Pool, box *Box) error {
	s := sealed.New(pool)
	check, err := s.KeyCheck(ctx)
	if err != nil {
		return err
	}
	if check == nil {
		some, err := s.AnySealed(ctx)
		if err != nil {
			return err
		}
		if some != nil {
			if _, err := box.Open(some); err != nil {
				return ErrKeyMismatch
			}
		}
		if check, err = s.SetKeyCheck(ctx, box.Seal(keyCheckPlain)); err != nil {
			return err
		}
	}
	return OpenKeyCheck(box, check)
}

// OpenKeyCheck tells whether box opens a key check read elsewhere (a
// backup's): ErrKeyMismatch when it does not.
func OpenKeyCheck(box *Box, check []byte) error {
	plain, err := box.Open(check)
	if err != nil || string(plain) != string(keyCheckPlain) {
		return ErrKeyMismatch
	}
	return nil
}

// RotationBatch is how many values `parley secret rotate` reads at a time.
const RotationBatch = 200

// ColumnRotation is what a pass of a rotation did to one sealed column:
// Resealed values re-sealed with the new key, Current ones that the new key
// opened already (a rotation run before, or a value written since), Failed
// ones that neither key opens, Changed ones that changed between the read
// and the write (a running instance wrote them: the next pass reads them
// again).
type ColumnRotation struct {
	Column                             sealed.Column
	Pass                               int
	Resealed, Current, Failed, Changed int
	// Done is false on the reports of a column still being walked (one
	// every progressEvery batches), true on its last.
	Done bool
	// FailedKeys are the row keys of the first failures, for the report.
	FailedKeys []string
}

// RotateSecrets re-seals every sealed value of the database with box's
// current key, where only its previous key opens it; box must be rotating
// (NewRotatingBox). Each value is written by a statement of its own that
// changes it only if it is still the value read, so running instances go
// on, and a run stopped midway is finished by running it again; values
// that changed under it are read again in another pass (up to
// maxRotationPasses). progress is called after each column of each pass,
// and every progressEvery batches of a long one.
// The error counts the values neither key opened (they are left as they
// are).
func RotateSecrets(ctx context.Context, pool *pgxpool.Pool, box *Box, progress func(ColumnRotation)) error {
	if !box.Rotating() {
		return errors.New("PARLEY_SECRET_KEY_PREVIOUS: required (the key the secrets are sealed with now; PARLEY_SECRET_KEY is the new one)")
	}
	for pass := 1; ; pass++ {
		failed, changed, err := rotationPass(ctx, sealed.New(pool), box, pass, progress)
		switch {
		case err != nil:
			return err
		case failed > 0:
			return fmt.Errorf("%d sealed values open with neither key and were left as they are (listed above); every other value is sealed with the new key", failed)
		case changed == 0:
			return nil
		case pass == maxRotationPasses:
			return fmt.Errorf("%d sealed values kept changing while they were re-sealed; run the rotation again", changed)
		}
	}
}

// progressEvery is how many batches of a column pass between two reports
// of a rotation's progress.
const progressEvery = 10

// maxRotationPasses bounds the passes of a rotation that values keep
// changing under.
const maxRotationPasses = 5

func rotationPass(ctx context.Context, s *sealed.Store, box *Box, pass int, progress func(ColumnRotation)) (failed, changed int, err error) {
	for _, c := range sealed.Columns {
		r := ColumnRotation{Column: c, Pass: pass}
		var after *string
		for batches := 1; ; batches++ {
			batch, err := s.Batch(ctx, c, after, RotationBatch)
			if err != nil {
				return 0, 0, err
			}
			for _, v := range batch {
				out, changed, err := box.Reseal(v.Sealed)
				switch {
				case err != nil:
					r.Failed++
					if len(r.FailedKeys) < 5 {
						r.FailedKeys = append(r.FailedKeys, v.Key)
					}
				case !changed:
					r.Current++
				default:
					ok, err := s.Replace(ctx, c, v.Key, v.Sealed, out)
					if err != nil {
						return 0, 0, err
					}
					if ok {
						r.Resealed++
					} else {
						r.Changed++
					}
				}
			}
			if len(batch) < RotationBatch {
				break
			}
			if batches%progressEvery == 0 && progress != nil {
				progress(r)
			}
			after = &batch[len(batch)-1].Key
		}
		failed += r.Failed
		changed += r.Changed
		r.Done = true
		if progress != nil {
			progress(r)
		}
	}
	return failed, changed, nil
}
