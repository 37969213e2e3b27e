package mirrormaker

import (
	"slices"
	"strings"

	"github.com/kafka-catchup/catchup/internal/config"
)

// topics converts --whitelist (or --include) and --blacklist into
// topics.include and topics.exclude.
func (c *converter) topics(mp *pipe) {
	p, fl, note, origin := &mp.p, c.flags, c.flagNote, mp.fromFlag
	include, exclude := splitTopics(fl.Whitelist), splitTopics(fl.Blacklist)
	// Check the patterns here, once, rather than once per pipeline in Parse.
	valid := func(key string, pats []string) bool {
		ok := true
		for _, pat := range pats {
			if err := config.CheckPattern(pat); err != nil {
				note(key, NoticeInvalid, "%v", err)
				mp.covered["topics"], ok = true, false
			}
		}
		return ok
	}
	includeOK, excludeOK := valid(fl.WhitelistFlag, include), valid("--blacklist", exclude)
	switch {
	case len(include) > 0:
		p.Topics.Include = include
		origin("topics.include", fl.WhitelistFlag)
		if includeOK {
			note(fl.WhitelistFlag, NoticeMapped, "→ topics.include: %s%s", strings.Join(include, ", "), topicsHow(include))
		}
	case len(exclude) > 0:
		p.Topics.Include = []string{".*"}
		origin("topics.include", "--blacklist")
		note(fl.WhitelistFlag, NoticeMapped, "not given: → topics.include: .* (every topic), less --blacklist")
	default:
		note(fl.WhitelistFlag, NoticeInvalid, "required, as by MirrorMaker: a Java regular expression or a comma-separated "+
			"list of topics; --whitelist '.*' selects every topic (internal topics are never copied)")
		mp.covered["topics"] = true
	}
	if len(exclude) > 0 {
		p.Topics.Exclude = exclude
		origin("topics.exclude", "--blacklist")
		if excludeOK {
			note("--blacklist", NoticeMapped, "→ topics.exclude: %s%s; exclude wins over include", strings.Join(exclude, ", "), topicsHow(exclude))
		}
	}
}

// splitTopics converts a MirrorMaker topic list as MirrorMaker read it (its
// TopicFilter): surrounding quotes and all spaces removed, and each comma
// meaning "or", here one pattern per comma-separated part. Commas inside
// [...] or {m,n} belong to the pattern.
func splitTopics(raw string) []string {
	s := strings.Trim(strings.TrimSpace(raw), `"'`)
	s = strings.ReplaceAll(s, " ", "")
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[', '{':
			depth++
		case ']', '}':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	return slices.DeleteFunc(out, func(p string) bool { return p == "" })
}

func topicsHow(pats []string) string {
	if len(pats) > 1 {
		return " (MirrorMaker read each comma as \"or\"; each pattern matches whole topic names, as there)"
	}
	return " (matched against whole topic names, as by MirrorMaker)"
}
