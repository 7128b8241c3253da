package stats

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// EventOf is the log event that carries a field: gpu_ms comes with
// GPU_END, synth_ms with SYNTH_END, finalize_ms with FINALIZE_END.
func EventOf(field string) string {
	switch field {
	case "gpu_ms":
		return "GPU_END"
	case "synth_ms":
		return "SYNTH_END"
	case "finalize_ms":
		return "FINALIZE_END"
	case "queue_ms":
		return "GPU_START"
	}
	return ""
}

// LogSamples are the values of one field read from a log.
type LogSamples struct {
	Values  []float64
	Skipped int            // lines not recognised or without the field
	Formats map[string]int // lines read per format: slog-text, slog-json, cuzk-timeline, plain
}

// ParseLog reads the field's values from a worker log: c2flow's slog text
// or JSON lines, plain "GPU_END ... gpu_ms=N" lines, and cuzk's stderr
// timeline (TIMELINE,<offset_ms>,GPU_END,<job>,worker=N,partition=P,gpu_ms=M).
// Only lines of the field's event count (GPU_END for gpu_ms); others are
// skipped and counted.
func ParseLog(r io.Reader, field string) (LogSamples, error) {
	ev := EventOf(field)
	out := LogSamples{Formats: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		v, format, ok := parseLine(line, ev, field)
		if !ok {
			out.Skipped++
			continue
		}
		out.Values = append(out.Values, v)
		out.Formats[format]++
	}
	return out, sc.Err()
}

func parseLine(line, ev, field string) (float64, string, bool) {
	switch {
	case strings.HasPrefix(line, "{"):
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			return 0, "", false
		}
		if ev != "" && m["msg"] != ev {
			return 0, "", false
		}
		switch v := m[field].(type) {
		case float64:
			return v, "slog-json", true
		case string:
			f, err := strconv.ParseFloat(v, 64)
			return f, "slog-json", err == nil
		}
		return 0, "", false
	case strings.HasPrefix(line, "TIMELINE,"):
		parts := strings.Split(line, ",")
		if len(parts) < 3 || (ev != "" && parts[2] != ev) {
			return 0, "", false
		}
		for _, p := range parts[3:] {
			if v, ok := strings.CutPrefix(p, field+"="); ok {
				f, err := strconv.ParseFloat(v, 64)
				return f, "cuzk-timeline", err == nil
			}
		}
		return 0, "", false
	}
	if ev != "" && !containsWord(line, ev) {
		return 0, "", false
	}
	for _, tok := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(tok, field+"="); ok {
			f, err := strconv.ParseFloat(strings.Trim(v, `",`), 64)
			format := "plain"
			if strings.Contains(line, "msg="+ev) {
				format = "slog-text"
			}
			return f, format, err == nil
		}
	}
	return 0, "", false
}

// containsWord reports whether the event appears as a token (msg=GPU_END
// or a bare GPU_END), not as part of a longer name.
func containsWord(line, ev string) bool {
	for _, tok := range strings.Fields(line) {
		if tok == ev || tok == "msg="+ev || tok == `msg="`+ev+`"` {
			return true
		}
	}
	return false
}
