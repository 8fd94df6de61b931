package parley

import (
	"crypto/sha256"
	"strconv"
)

// EmbeddingText is what an embedding endpoint is given of a corpus entry:
// its title, summary and content, a line apart (issue 34). The database
// computes its hash the same way (db.embeddingHashSQL), so that an entry
// whose text changed is told apart from one whose stored vector is current
// without reading the text out.
func EmbeddingText(title string, summary *string, content string) string {
	s := ""
	if summary != nil {
		s = *summary
	}
	return title + "\n" + s + "\n" + content
}

// EmbeddingHash is the SHA-256 of the entry's EmbeddingText, stored with
// its vector: a vector whose hash is not the entry's is of an older text.
func EmbeddingHash(e CorpusEntry) []byte {
	h := sha256.Sum256([]byte(EmbeddingText(e.Title, e.Summary, e.Content)))
	return h[:]
}

// CorpusVector is an entry's stored embedding: unit length, of the text
// whose EmbeddingHash is TextHash.
type CorpusVector struct {
	EntryID  string
	TextHash []byte
	Vector   []float32
}

// EmbeddingModelKey names the vectors a model makes, as they are stored
// (corpus_embeddings.model): the model, and the dimensions when asked for
// ("text-embedding-3-small@256"), since one model gives vectors of several
// lengths. 0 dimensions is the model's own length.
func EmbeddingModelKey(model string, dimensions int) string {
	if dimensions > 0 {
		return model + "@" + strconv.Itoa(dimensions)
	}
	return model
}
