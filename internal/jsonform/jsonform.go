// Package jsonform rewrites a JSON document into other bytes of the same
// content (layout, key order), for the tests that show an input's identity
// is its content, not its bytes.
package jsonform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Indent is b with each object member on a line of its own, indented by a
// tab a level, and a trailing newline. Arrays stay on one line: a C1 is
// mostly arrays of bytes, and a line a byte would pass the decoders' slack
// for whitespace (twice the compact size).
func Indent(b []byte) ([]byte, error) {
	out, err := rewrite(b, false, true)
	if err != nil {
		return nil, fmt.Errorf("jsonform: indent: %w", err)
	}
	return append(out, '\n'), nil
}

// ReverseKeys is b with the keys of every object in reverse order, and
// spaces after colons and commas. Every object of two keys or more is in
// another order than b's.
func ReverseKeys(b []byte) ([]byte, error) {
	out, err := rewrite(b, true, false)
	if err != nil {
		return nil, fmt.Errorf("jsonform: reverse keys: %w", err)
	}
	return out, nil
}

// rewrite writes the one value of b, numbers and strings as written.
func rewrite(b []byte, reverse, indent bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	w := writer{dec: dec, reverse: reverse, indent: indent}
	if err := w.value(&w.out, 0); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the document")
	}
	return w.out.Bytes(), nil
}

type writer struct {
	dec             *json.Decoder
	reverse, indent bool
	out             bytes.Buffer
}

// value writes the next value of the decoder to out, at depth.
func (w *writer) value(out *bytes.Buffer, depth int) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		var members [][]byte
		for w.dec.More() {
			key, err := w.dec.Token()
			if err != nil {
				return err
			}
			var m bytes.Buffer
			k, _ := json.Marshal(key)
			m.Write(k)
			m.WriteString(": ")
			if err := w.value(&m, depth+1); err != nil {
				return err
			}
			members = append(members, m.Bytes())
		}
		if _, err := w.dec.Token(); err != nil { // '}'
			return err
		}
		if w.reverse {
			for i, j := 0, len(members)-1; i < j; i, j = i+1, j-1 {
				members[i], members[j] = members[j], members[i]
			}
		}
		sep, pad, end := ", ", "", ""
		if w.indent {
			sep, pad, end = ",", "\n"+strings.Repeat("\t", depth+1), "\n"+strings.Repeat("\t", depth)
		}
		out.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				out.WriteString(sep)
			}
			out.WriteString(pad)
			out.Write(m)
		}
		if len(members) > 0 {
			out.WriteString(end)
		}
		out.WriteByte('}')
	case json.Delim('['):
		out.WriteByte('[')
		for first := true; w.dec.More(); first = false {
			if !first {
				out.WriteByte(',')
			}
			if err := w.value(out, depth); err != nil { // inline: no level of its own
				return err
			}
		}
		if _, err := w.dec.Token(); err != nil { // ']'
			return err
		}
		out.WriteByte(']')
	case nil:
		out.WriteString("null")
	default:
		if n, ok := tok.(json.Number); ok {
			out.WriteString(n.String())
			break
		}
		v, err := json.Marshal(tok)
		if err != nil {
			return err
		}
		out.Write(v)
	}
	return nil
}
