package handlers

import (
	"encoding/json"
	"testing"
)

var jsonStringCases = []string{
	"", "Hello.", `say "hi" \ bye`, "line\nbreak\r\ttab\b\f", "\x00\x01\x1f\x7f",
	"<script>alert('x')</script> & more", "caf\u00e9 \u2028 \u2029 \U0001F600 日本語",
	"bad \xff utf-8 \xc3", "\xed\xa0\x80 surrogate", "é at the end \xe2\x82",
}

// appendJSONString writes what json.Marshal writes, byte for byte.
func TestAppendJSONString(t *testing.T) {
	for _, s := range jsonStringCases {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkSSEText: one chunk of an answer as its event's JSON string.
func BenchmarkSSEText(b *testing.B) {
	chunk := "The shop opens at nine, "
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 256)
		for b.Loop() {
			buf = appendJSONString(buf[:0], chunk)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(chunk)
		}
	})
}
