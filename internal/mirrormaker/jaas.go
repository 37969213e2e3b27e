package mirrormaker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// jaasModule is one entry of a JAAS configuration.
type jaasModule struct {
	class, flag string
	opts        []jaasOption
}

type jaasOption struct{ key, value string }

// parseJAAS reads a sasl.jaas.config value:
//
//	LoginModuleClass ControlFlag option="value" option=value ... ;
//
// Values may be quoted with '"', with '\' escaping the next character.
// Errors never quote values or option names: one of the values is a
// password, and a broken quote turns part of it into a name.
func parseJAAS(s string) ([]jaasModule, error) {
	var mods []jaasModule
	i := 0
	space := func() {
		for i < len(s) && strings.ContainsRune(" \t\r\n\f", rune(s[i])) {
			i++
		}
	}
	word := func() string {
		start := i
		for i < len(s) && !strings.ContainsRune(" \t\r\n\f=;\"", rune(s[i])) {
			i++
		}
		return s[start:i]
	}
	const form = `; write it as: LoginModuleClass required username="..." password="...";`
	for space(); i < len(s); space() {
		m := jaasModule{class: word()}
		space()
		m.flag = word()
		if m.class == "" || !slices.Contains([]string{"required", "requisite", "sufficient", "optional"}, m.flag) {
			return nil, errors.New("not a JAAS login module entry (a class name and then required, requisite, sufficient or optional)" + form)
		}
		for {
			space()
			if i == len(s) {
				return nil, errors.New("the entry of " + m.class + " does not end with ';'" + form)
			}
			if s[i] == ';' {
				i++
				break
			}
			key := word()
			space()
			if key == "" || i == len(s) || s[i] != '=' {
				return nil, fmt.Errorf("option %d of %s has no '=' and value%s", len(m.opts)+1, m.class, form)
			}
			i++
			space()
			value := word()
			if i < len(s) && s[i] == '"' {
				var b strings.Builder
				closed := false
				for i++; i < len(s) && !closed; i++ {
					switch {
					case s[i] == '\\' && i+1 < len(s):
						i++
						b.WriteByte(s[i])
					case s[i] == '"':
						closed = true
					default:
						b.WriteByte(s[i])
					}
				}
				if !closed {
					return nil, fmt.Errorf("the value of option %d of %s has no closing '\"'", len(m.opts)+1, m.class)
				}
				value = b.String()
			}
			m.opts = append(m.opts, jaasOption{key, value})
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, errors.New("empty" + form)
	}
	return mods, nil
}
