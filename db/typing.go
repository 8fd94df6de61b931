package db

import "github.com/parley/parley/db/typing"

// The typing signals' timing and sides (db/typing), for the stream's read
// (db/live) and the handlers.
const (
	TypingFor    = typing.For
	TypingEvery  = typing.Every
	PartyVisitor = typing.Visitor
	PartyPerson  = typing.Person
)
