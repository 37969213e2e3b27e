package mirrormaker

import (
	"slices"
	"testing"
)

func TestSplitTopics(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{".*", []string{".*"}},
		{`"orders, payments"`, []string{"orders", "payments"}},
		{"'a.*|b'", []string{"a.*|b"}},
		{"a{1,3},[x,y]z,c\\,d", []string{"a{1,3}", "[x,y]z", "c\\,d"}},
		{" , ", nil},
	}
	for _, tt := range tests {
		if got := splitTopics(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitTopics(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
