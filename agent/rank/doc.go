// Package rank orders a turn's knowledge-base candidates for the visitor's
// messages (issue 34): Corpus, a BM25-like score over their words (a typo
// read as the nearest word of the candidates, another language than the
// visitor's at half weight), the candidates' words kept between turns;
// Fuse, that order fused with the candidates' order by meaning (reciprocal
// rank fusion); Scores, the score alone, which the local provider picks its
// passages by. The engine (package agent, turn_corpus.go) reads the
// candidates and their vectors and calls it.
package rank
