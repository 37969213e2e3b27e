package mirrormaker

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name, in string
		want     []jaasModule
		wantErr  string
	}{
		{"quoted", `org.x.PlainLoginModule required username="alice" password="p w";`,
			[]jaasModule{{"org.x.PlainLoginModule", "required", []jaasOption{{"username", "alice"}, {"password", "p w"}}}}, ""},
		{"unquoted, spaces, newlines", "  M  optional\n a = b\tc=d ;",
			[]jaasModule{{"M", "optional", []jaasOption{{"a", "b"}, {"c", "d"}}}}, ""},
		{"escapes and ; inside quotes", `M required password="a\"b\\c;d";`,
			[]jaasModule{{"M", "required", []jaasOption{{"password", `a"b\c;d`}}}}, ""},
		{"two modules", `A required; B sufficient x="1";`,
			[]jaasModule{{"A", "required", nil}, {"B", "sufficient", []jaasOption{{"x", "1"}}}}, ""},
		{"no flag", `M username="u";`, nil, "not a JAAS login module entry"},
		{"no semicolon", `M required password="hunter2"`, nil, "does not end with ';'"},
		{"unclosed quote", `M required username="u" password="hunter2;`, nil, `the value of option 2 of M has no closing '"'`},
		{"no value", `M required password;`, nil, `option 1 of M has no '=' and value`},
		{"broken quote", `M required password="a"hunter2" x=y;`, nil, `option 2 of M has no '=' and value`},
		{"empty", "  ", nil, "empty"},
	}
	for _, tt := range tests {
		got, err := parseJAAS(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: parseJAAS(%q) error = %v, want it to contain %q", tt.name, tt.in, err, tt.wantErr)
			} else if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: parseJAAS error %q quotes the password", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: parseJAAS(%q): %v", tt.name, tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(jaasModule{}, jaasOption{})); diff != "" {
			t.Errorf("%s: parseJAAS(%q) (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}
