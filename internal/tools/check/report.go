package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/internal/tools/validate"
)

// report writes the check's own findings, then the validation of its
// recording (what the server sent, against its revision's schemas and
// validate's rules), through rep, and returns the counts of both.
func (c *checker) report(rep validate.Reporter) (validate.Report, error) {
	var own validate.Report
	for _, f := range c.findings {
		rep.Finding(f)
		count(&own, f)
	}
	// The probes' sessions are in the recording for the timeline; what
	// the server did with them is the probes' to judge (validate would
	// see a session that breaks the lifecycle on purpose).
	var dropped validate.Report
	v, err := validate.New(validate.WithSide("server"), validate.WithFindingHandler(func(f validate.Finding) {
		if strings.HasPrefix(f.Session, probeSession) {
			count(&dropped, f)
			return
		}
		rep.Finding(f)
	}))
	if err != nil {
		return validate.Report{}, fmt.Errorf("validating the recording: %w", err)
	}
	report := v.Check(context.Background(), []validate.Input{validate.FileInput(c.file)})
	report.Errors += own.Errors - dropped.Errors
	report.Warnings += own.Warnings - dropped.Warnings
	if err := rep.Finish(&report, []string{c.file}); err != nil {
		return report, fmt.Errorf("writing the report: %w", err)
	}
	return report, nil
}

func count(r *validate.Report, f validate.Finding) {
	if f.Severity == validate.Error {
		r.Errors++
	} else {
		r.Warnings++
	}
}
