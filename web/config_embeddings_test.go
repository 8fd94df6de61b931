package web

import (
	"strings"
	"testing"
)

// PARLEY_EMBEDDINGS_* (issue 34): unset, no embeddings; set, the URL and
// model are required together, and a stray setting is a mistake.
func TestConfigEmbeddings(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(map[string]string{"PARLEY_EMBEDDINGS_URL": "https://api.openai.com/v1/",
		"PARLEY_EMBEDDINGS_API_KEY": "sk-test", "PARLEY_EMBEDDINGS_MODEL": "text-embedding-3-small", "PARLEY_EMBEDDINGS_DIMENSIONS": "256"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.EmbeddingsURL != "https://api.openai.com/v1" || c.EmbeddingsAPIKey != "sk-test" ||
		c.EmbeddingsModel != "text-embedding-3-small" || c.EmbeddingsDimensions != 256 {
		t.Errorf("%+v", c)
	}
	if e := managedEmbedder(c); e == nil || e.Model() != "text-embedding-3-small@256" {
		t.Errorf("embedder %+v", e)
	}
	if c, err := LoadConfig(envOf(nil)); err != nil || c.EmbeddingsURL != "" || managedEmbedder(c) != nil {
		t.Errorf("unset: %v %+v", err, c)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"NoModel", map[string]string{"PARLEY_EMBEDDINGS_URL": "http://127.0.0.1:11434/v1"}, "PARLEY_EMBEDDINGS_MODEL: required"},
		{"ModelWithoutURL", map[string]string{"PARLEY_EMBEDDINGS_MODEL": "m"}, "PARLEY_EMBEDDINGS_MODEL: set without PARLEY_EMBEDDINGS_URL"},
		{"KeyWithoutURL", map[string]string{"PARLEY_EMBEDDINGS_API_KEY": "k"}, "PARLEY_EMBEDDINGS_API_KEY: set without"},
		{"BadURL", map[string]string{"PARLEY_EMBEDDINGS_URL": "ftp://x", "PARLEY_EMBEDDINGS_MODEL": "m"}, "PARLEY_EMBEDDINGS_URL"},
		{"BadDimensions", map[string]string{"PARLEY_EMBEDDINGS_URL": "http://x/v1", "PARLEY_EMBEDDINGS_MODEL": "m",
			"PARLEY_EMBEDDINGS_DIMENSIONS": "many"}, "PARLEY_EMBEDDINGS_DIMENSIONS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(envOf(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "sk-") {
				t.Errorf("the error shows a key: %v", err)
			}
		})
	}
}
