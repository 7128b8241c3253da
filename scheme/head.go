package scheme

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/c2flow/c2flow/job"
)

// HeadBytes is how much of the start of a C1 file Recognize is given:
// enough for the leading fields of every scheme's format.
const HeadBytes = 64 << 10

// Head is what the start of a C1 file says of itself: the names of its
// top-level JSON fields in order, as far as the head reaches, and the
// values of those that are strings read whole.
type Head struct {
	Fields  []string
	Strings map[string]string
}

// Has reports whether the head has a top-level field named name, compared
// without case (encoding/json matches field names so).
func (h Head) Has(name string) bool {
	for _, f := range h.Fields {
		if strings.EqualFold(f, name) {
			return true
		}
	}
	return false
}

// ReadHead parses the top-level fields of a JSON object from the start of
// a file (which may end mid-value: parsing stops there). It is a parse,
// not a pattern: a field name inside a string or a nested object is not a
// top-level field.
func ReadHead(b []byte) Head { return readFields(b[:min(len(b), HeadBytes)]) }

// readFields parses the top-level fields of the JSON object b starts with,
// as far as b reaches.
func readFields(b []byte) Head {
	h := Head{Strings: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h
		}
		key, ok := t.(string)
		if !ok {
			return h
		}
		h.Fields = append(h.Fields, key)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return h // the head ends in this field's value
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			h.Strings[key] = s
		}
	}
	return h
}

// Recognize returns the scheme whose C1 format the start of a file is
// (each scheme's Recognize decides, from ReadHead's parse), or an error
// naming what the file's head holds.
func (s Set) Recognize(head []byte) (Identifier, error) {
	return s.recognize(ReadHead(head))
}

// recognize returns the scheme that recognizes a file by what h says of it.
func (s Set) recognize(h Head) (Identifier, error) {
	for _, sc := range s {
		if id, ok := sc.(Identifier); ok && id.Recognize(h) {
			return id, nil
		}
	}
	what := "no JSON object"
	if len(h.Fields) > 0 {
		what = fmt.Sprintf("fields %s", strings.Join(h.Fields[:min(len(h.Fields), 4)], ", "))
		if p, ok := h.Strings["registered_proof"]; ok {
			what += fmt.Sprintf(", registered_proof %q", p)
		}
	}
	return nil, fmt.Errorf("not a C1 of any scheme (%s): its head has %s", s.names(), what)
}

// Identify gives the identity of a C1 file (its name and bytes) and its
// canonical bytes: the scheme whose format it is (Recognize, else by all
// the file's top-level fields) binds it to its prover and sector and
// checks it natively (Identifier.Identify).
func (s Set) Identify(ctx context.Context, name string, raw []byte, h Hints) (Identifier, job.Ref, []byte, error) {
	sc, err := s.Recognize(raw)
	if err != nil && len(raw) > HeadBytes {
		// The same content in other bytes is the same input: a file whose
		// keys are in another order (a long field first) is routed by all
		// its top-level fields, not its head's.
		if all, aerr := s.recognize(readFields(raw)); aerr == nil {
			sc, err = all, nil
		}
	}
	if err != nil {
		return nil, job.Ref{}, nil, err
	}
	id, canon, err := sc.Identify(ctx, name, raw, h)
	if err != nil {
		return nil, job.Ref{}, nil, err
	}
	return sc, id, canon, nil
}
