package promtest

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Row is one row of the metrics table of docs/metrics.md: an EMF name and
// its Prometheus name ("—" for none), type and labels.
type Row struct{ EMF, Prom, Type, Labels string }

// DocumentedMetrics reads the rows of the table between the markers
// `<!-- metrics table` and `<!-- end of metrics table -->` of the file at
// path (docs/metrics.md).
func DocumentedMetrics(path string) ([]Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := string(b)
	start, end := strings.Index(s, "<!-- metrics table"), strings.Index(s, "<!-- end of metrics table -->")
	if start < 0 || end < start {
		return nil, fmt.Errorf("%s: no table between <!-- metrics table ... --> and <!-- end of metrics table -->", path)
	}
	var rows []Row
	for _, line := range strings.Split(s[start:end], "\n")[1:] {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) < 4 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if strings.HasPrefix(cells[0], "---") || cells[0] == "EMF (CloudWatch)" {
			continue
		}
		rows = append(rows, Row{EMF: cells[0], Prom: cells[1], Type: cells[2], Labels: cells[3]})
	}
	if len(rows) == 0 {
		return nil, errors.New(path + ": the metrics table has no rows")
	}
	return rows, nil
}
