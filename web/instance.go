package web

import (
	"cmp"
	"context"
	"time"
)

// instanceStaleBeats is how many heartbeats an instance may miss before it
// counts as dead.
const instanceStaleBeats = 3

// StartInstance registers this process in the instances table and beats its
// heartbeat every Config.Heartbeat until stop, which deletes the row. The
// engine's turns name the instance in their session leases: should the
// process die, its leases are free once its heartbeat is instanceStaleBeats
// beats old, not when they expire (db.OpenTurn). The heartbeat does
// not end with ctx: it must go on while the server drains its turns.
func (s *Server) StartInstance(ctx context.Context) (stop func(), err error) {
	every := cmp.Or(s.Config.Heartbeat, 5*time.Second)
	staleAfter := instanceStaleBeats * every
	id, err := s.DB.RegisterInstance(ctx, staleAfter)
	if err != nil {
		return nil, err
	}
	s.Base.Engine.Instance = id
	beating, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-beating.Done():
				return
			case <-tick.C:
			}
			bctx, cancelBeat := context.WithTimeout(beating, every)
			if err := s.DB.BeatInstance(bctx, id, staleAfter); err != nil && beating.Err() == nil {
				s.Logger.Error("instance heartbeat", "instance", id, "err", err)
			}
			cancelBeat()
		}
	}()
	s.Logger.Info("instance registered", "instance", id, "heartbeat", every.String())
	return func() {
		cancel()
		<-done
		rctx, cancelRemove := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancelRemove()
		if err := s.DB.RemoveInstance(rctx, id); err != nil {
			s.Logger.Error("removing the instance", "instance", id, "err", err)
		}
	}, nil
}
