package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// alarmMention is a backticked name the docs present as an alarm: one
// ending in Alarm, or one followed by the word alarm.
var alarmMention = regexp.MustCompile("`([A-Z][A-Za-z0-9]*Alarm)`|`([A-Z][A-Za-z0-9]*)` alarm")

// TestDocsNameTheTemplatesAlarms: every alarm the README and docs/ name is
// an alarm template.yaml deploys, by its logical id, so that an operator who
// searches the console or the stack for it finds it.
func TestDocsNameTheTemplatesAlarms(t *testing.T) {
	alarms := openTemplate(t, nil).GetAllCloudWatchAlarmResources()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range alarmMention.FindAllStringSubmatch(line, -1) {
				name := m[1] + m[2]
				n++
				if _, ok := alarms[name]; !ok {
					t.Errorf("%s:%d names the alarm %s, which template.yaml does not deploy", filepath.Base(f), i+1, name)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d alarm names in the docs; the pattern lost them", n)
	}
}
