package mirrormaker

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/magiconair/properties"
)

func TestKeyLines(t *testing.T) {
	data := "# comment \\\n! another\n\na = 1\nb:2\n  c 3\nd = x\\\n  y\\\n  z\ne=\\u00e9\ne=again\nlast=no newline"
	l := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	got := keyLines(l, []byte(data))
	want := map[string]int{"a": 4, "b": 5, "c": 6, "d": 7, "e": 10, "last": 12}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keyLines (-want +got):\n%s", diff)
	}
}

func TestUnknownKeys(t *testing.T) {
	m, err := convert(t, plainConsumer+"bootstrap.server=x:1\nfoo.bar.baz=1\nderializer.class=x\n",
		plainProducer+"compresion.type=lz4\nserilizer.class=x\n", Flags{})
	var mmErr *Error
	if !errors.As(err, &mmErr) || len(mmErr.Problems) != 5 || m.File != nil {
		t.Fatalf("err = %v, File %v; want a *Error with 5 problems and no File", err, m.File)
	}
	// The draft YAML is still there, every problem in it as a comment.
	for _, p := range mmErr.Problems {
		if !strings.Contains(string(m.YAML), "PROBLEM: "+p.String()) && !strings.Contains(string(m.YAML), "PROBLEM: "+p.Key+": ") {
			t.Errorf("the draft YAML does not carry %q:\n%s", p, m.YAML)
		}
	}
	want := map[string][]string{
		"bootstrap.server": {`unknown: not a Kafka consumer setting (did you mean "bootstrap.servers"?)`},
		"foo.bar.baz":      {"unknown: not a Kafka consumer setting that catchup knows; remove it, or fix it if it is misspelled"},
		"compresion.type":  {`unknown: not a Kafka producer setting (did you mean "compression.type"?)`},
		// Suggestions come from the file's own kind: a consumer file is
		// never told about serializer.class, a producer key.
		"derializer.class": {`unknown: not a Kafka consumer setting (did you mean "key.deserializer" or "value.deserializer"?)`},
		"serilizer.class":  {`unknown: not a Kafka producer setting (did you mean "serializer.class"?)`},
	}
	for key, w := range want {
		if got := noticesOf(m, key); !slices.Equal(got, w) {
			t.Errorf("notices of %s = %q, want %q", key, got, w)
		}
	}
}

func TestNotAPropertiesFile(t *testing.T) {
	m, err := Convert([]File{{Name: "bad.config", Data: []byte("a=\\u00")}}, File{Name: "p", Data: []byte(plainProducer)}, Flags{Whitelist: "x"})
	if err == nil || len(m.Notices) == 0 || m.Notices[0].File != "bad.config" || m.Notices[0].Kind != NoticeInvalid {
		t.Errorf("err = %v, notices %v; want an invalid notice on bad.config", err, m.Notices)
	}
}

// TestUnreadableLineQuotesNothing: a line the properties library cannot
// read is named by its number; the library's own message quotes the
// token, which may be part of a password.
func TestUnreadableLineQuotesNothing(t *testing.T) {
	m, err := convert(t, plainConsumer+"=pw-4711-secret\n", plainProducer, Flags{})
	if err == nil {
		t.Fatal("Convert of an unreadable file succeeded")
	}
	var all string
	for _, n := range m.Notices {
		all += n.String() + "\n"
	}
	if strings.Contains(all, "pw-4711") || !strings.Contains(all, "not a Java .properties file: line 3 cannot be read") {
		t.Errorf("notices:\n%s\nwant line 3 named and no part of its value", all)
	}
}
